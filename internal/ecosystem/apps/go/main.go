// Command goapps holds the Go apps of shepherd's ecosystem suite, one per
// client: goapps pgx|pq|gorm, connecting to $DATABASE_URL. Each runs its
// steps in order and, at the first failure, prints "FAIL step: error" and
// exits 1. It is its own module so that the clients it uses are not
// dependencies of shepherd.
package main

import (
	"fmt"
	"os"
	"strings"
)

// app is a list of named steps.
type app []struct {
	name string
	run  func() error
}

var apps = map[string]func(url string) app{
	"pgx":  pgxApp,
	"pq":   pqApp,
	"gorm": gormApp,
}

func main() {
	if len(os.Args) != 2 || apps[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: goapps pgx|pq|gorm")
		os.Exit(2)
	}
	for _, s := range apps[os.Args[1]](os.Getenv("DATABASE_URL")) {
		if err := s.run(); err != nil {
			fmt.Printf("FAIL %s: %s\n", s.name, strings.Join(strings.Fields(err.Error()), " "))
			os.Exit(1)
		}
		fmt.Println("ok", s.name)
	}
}

func check(cond bool, format string, args ...any) error {
	if !cond {
		return fmt.Errorf(format, args...)
	}
	return nil
}
