//go:build race

package server

// raceEnabled: the race detector keeps shadow memory for every byte the
// program touches, several times its heap, in the resident set.
const raceEnabled = true
