// Package pgfunc is shepherd's one model of the PostgreSQL functions it
// types and writes: each function's overloads (argument types to result
// type) as PostgreSQL 15's catalog has them, PostgreSQL's rules for
// choosing an overload for the argument types of a call, the implicit
// casts and common types those rules need, and which engines write a
// function as PostgreSQL does. The SQL writers (package dialect) and
// the column typing of Describe and answers (package sqlan) both ask it,
// so a function has one result type everywhere; its tests check every
// overload against a real PostgreSQL server.
package pgfunc

import (
	"fmt"
	"strings"
)

// Kind says how a function is called.
type Kind byte

const (
	// Plain is an ordinary function.
	Plain Kind = 'f'
	// Aggregate is an aggregate function.
	Aggregate Kind = 'a'
	// Window is a window function (called with OVER only).
	Window Kind = 'w'
)

// Overload is one pg_proc entry of a function.
type Overload struct {
	// Args are the argument types; with Variadic, the last is the type
	// of the VARIADIC argument (an array type, or "any").
	Args     []string
	Variadic bool
	// Defaults is how many of the last arguments have defaults.
	Defaults int
	Result   string
	Kind     Kind
	// Same marks an overload every engine writes as PostgreSQL does;
	// Math one MariaDB and SQLite's math functions write so, under
	// MariaDB's name when MariaDB is set.
	Same, Math bool
	MariaDB    string
}

// Func is one function of the catalogue.
type Func struct {
	Name      string
	Overloads []Overload
}

// catalogue holds every function of spec by name.
var catalogue = parse(spec)

// Lookup returns the catalogue's entry for a function (by its
// lower-case name, as schema.FuncName gives it); nil for a function
// shepherd does not know.
func Lookup(name string) *Func { return catalogue[name] }

// Names lists every function of the catalogue.
func Names() []string {
	out := make([]string, 0, len(catalogue))
	for n := range catalogue {
		out = append(out, n)
	}
	return out
}

func parse(text string) map[string]*Func {
	out := map[string]*Func{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, rest, ok := strings.Cut(line, "(")
		argText, rest, ok2 := strings.Cut(rest, ")")
		fields := strings.Fields(rest)
		if !ok || !ok2 || len(fields) == 0 {
			panic(fmt.Sprintf("pgfunc: bad catalogue line %q", line))
		}
		o := Overload{Result: fields[0], Kind: Plain}
		if argText != "" {
			o.Args = strings.Split(argText, ",")
		}
		for i, a := range o.Args {
			if t, ok := strings.CutSuffix(a, "?"); ok {
				o.Args[i] = t
				o.Defaults++
			}
		}
		if n := len(o.Args); n > 0 && strings.HasPrefix(o.Args[n-1], "...") {
			o.Args[n-1], o.Variadic = o.Args[n-1][3:], true
		}
		for _, f := range fields[1:] {
			switch {
			case f == "agg":
				o.Kind = Aggregate
			case f == "win":
				o.Kind = Window
			case f == "same":
				o.Same = true
			case f == "math":
				o.Math = true
			case strings.HasPrefix(f, "my="):
				o.MariaDB = f[3:]
			default:
				panic(fmt.Sprintf("pgfunc: bad catalogue line %q", line))
			}
		}
		fn := out[name]
		if fn == nil {
			fn = &Func{Name: name}
			out[name] = fn
		}
		fn.Overloads = append(fn.Overloads, o)
	}
	return out
}

// takes reports whether an overload takes n arguments.
func (o *Overload) takes(n int) bool {
	if o.Variadic {
		return n >= len(o.Args)
	}
	return n <= len(o.Args) && n >= len(o.Args)-o.Defaults
}

// arg is the declared type of argument i (of a call that o takes).
func (o *Overload) arg(i int) string {
	if o.Variadic && i >= len(o.Args)-1 {
		last := o.Args[len(o.Args)-1]
		if e := element(last); e != "" {
			return e
		}
		return last
	}
	return o.Args[i]
}

// Alike reports whether every engine writes a call of name with n
// arguments as PostgreSQL does (the name in capitals).
func Alike(name string, n int) bool {
	return spelled(name, n, func(o *Overload) bool { return o.Same })
}

// MathAlike reports whether MariaDB and SQLite's math functions write a
// call of name with arguments of the given types (as Result takes them)
// as PostgreSQL does, and MariaDB's name for it ("" when the same). Every
// overload the types leave open must be marked: the engines compute in
// double precision, so exp, ln, sqrt and power of numeric, whose digits
// PostgreSQL computes in numeric, are not.
func MathAlike(name string, args []string) (mariaDB string, ok bool) {
	cands := chosen(name, args)
	for _, o := range cands {
		if !o.Math {
			return "", false
		}
		mariaDB = o.MariaDB
	}
	return mariaDB, len(cands) > 0
}

// MathOf reports whether some overload of name taking n arguments is
// written by MariaDB and SQLite's math functions (then a call MathAlike
// refuses has overloads of numeric its engines cannot compute).
func MathOf(name string, n int) bool {
	return spelled(name, n, func(o *Overload) bool { return o.Math })
}

func spelled(name string, n int, mark func(*Overload) bool) bool {
	f := catalogue[name]
	if f == nil {
		return false
	}
	for i := range f.Overloads {
		if o := &f.Overloads[i]; mark(o) && o.takes(n) {
			return true
		}
	}
	return false
}
