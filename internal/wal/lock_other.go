//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package wal

import "os"

// lockDir does nothing where flock is missing: the caller must make sure
// one process at a time opens a directory.
func lockDir(string) (*os.File, error) { return nil, nil }

func unlockDir(*os.File) error { return nil }
