package pgfunc

import "slices"

// Result is the type of a call of the named function with arguments of
// the given types, chosen as PostgreSQL's func_select_candidate chooses
// an overload: "" when the function is unknown, when PostgreSQL would
// fail, or when the overloads the argument types leave open disagree on
// the result. An argument type "" is one shepherd cannot tell (it may be
// any type); Literal is an untyped string or NULL.
func Result(name string, args []string) string {
	cands := chosen(name, args)
	out := ""
	for i, o := range cands {
		r := resolve(o, args)
		if r == "" || i > 0 && r != out {
			return "" // the overloads left disagree
		}
		out = r
	}
	return out
}

// chosen are the overloads a call of name with arguments of the given
// types may resolve to (see Result): one when PostgreSQL's choice is
// clear, several when unknown argument types leave it open, none when
// the function is unknown or PostgreSQL would fail.
func chosen(name string, args []string) []*Overload {
	f := catalogue[name]
	if f == nil {
		return nil
	}
	var cands []*Overload
	for i := range f.Overloads {
		o := &f.Overloads[i]
		if o.takes(len(args)) && coercible(o, args) {
			cands = append(cands, o)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	for _, o := range cands {
		if exact(o, args) == len(args) {
			return []*Overload{o}
		}
	}
	cands = keepMost(cands, func(o *Overload) int { return exact(o, args) })
	cands = keepMost(cands, func(o *Overload) int {
		n := 0
		for i, a := range args {
			if known(a) && a != o.arg(i) && Preferred(o.arg(i)) {
				n++
			}
		}
		return n
	})
	cands = literals(cands, args)
	if len(cands) > 1 && !slices.Contains(args, "") {
		return nil // ambiguous: PostgreSQL fails
	}
	return cands
}

func known(t string) bool { return t != "" && t != Literal }

// coercible reports whether every argument converts implicitly to the
// overload's type for it.
func coercible(o *Overload, args []string) bool {
	for i, a := range args {
		if !coerces(a, o.arg(i)) {
			return false
		}
	}
	return true
}

func coerces(a, d string) bool {
	switch {
	case !known(a), a == d, d == "any", d == "anyelement", d == "anycompatible":
		return true
	case d == "anynonarray", d == "anycompatiblenonarray":
		return !IsArray(a)
	case d == "anyarray", d == "anycompatiblearray":
		return IsArray(a)
	}
	return ImplicitCast(a, d)
}

// exact counts the arguments whose type is the overload's.
func exact(o *Overload, args []string) int {
	n := 0
	for i, a := range args {
		if known(a) && a == o.arg(i) {
			n++
		}
	}
	return n
}

// keepMost keeps the candidates that score highest.
func keepMost(cands []*Overload, score func(*Overload) int) []*Overload {
	if len(cands) < 2 {
		return cands
	}
	best, out := -1, cands[:0:0]
	for _, o := range cands {
		switch s := score(o); {
		case s > best:
			best, out = s, append(cands[:0:0], o)
		case s == best:
			out = append(out, o)
		}
	}
	return out
}

// category is Category with PostgreSQL's 'P' for pseudo-types.
func category(t string) byte {
	switch t {
	case "any", "anyelement", "anyarray", "anynonarray", "anycompatible", "anycompatiblearray", "anycompatiblenonarray", "record":
		return 'P'
	}
	if IsArray(t) {
		return 'A'
	}
	return Category(t)
}

// literals applies PostgreSQL's rules for untyped literals to the
// candidates left: at each literal's position, the string category if a
// candidate takes it there, else the one category all take; and within
// it the preferred type if a candidate takes it.
func literals(cands []*Overload, args []string) []*Overload {
	for i, a := range args {
		if a != Literal || len(cands) < 2 {
			continue
		}
		cat := byte(0)
		for j, o := range cands {
			c := category(o.arg(i))
			switch {
			case c == 'S':
				cat = 'S'
			case j == 0:
				cat = c
			case cat != 'S' && c != cat:
				cat = 1 // no one category: ambiguous
			}
		}
		if cat == 1 {
			return nil
		}
		var kept []*Overload
		pref := false
		for _, o := range cands {
			if category(o.arg(i)) == cat {
				kept = append(kept, o)
				pref = pref || Preferred(o.arg(i))
			}
		}
		if pref {
			kept = keepMost(kept, func(o *Overload) int {
				if Preferred(o.arg(i)) {
					return 1
				}
				return 0
			})
		}
		cands = kept
	}
	return cands
}

// resolve is an overload's result type for the arguments, its
// polymorphic result worked out from them.
func resolve(o *Overload, args []string) string {
	if !anyElementKnown(o, args) {
		return "" // PostgreSQL cannot tell the polymorphic type
	}
	elem, unknown := "", false
	var compat []string
	for i, a := range args {
		d := o.arg(i)
		switch d {
		case "anyelement", "anynonarray", "anyarray":
			switch {
			case a == "":
				unknown = true
				continue
			case a == Literal:
				continue
			case d == "anyarray":
				a = element(a)
			}
			if elem != "" && elem != a {
				return "" // PostgreSQL fails
			}
			elem = a
		case "anycompatible", "anycompatiblenonarray":
			compat = append(compat, a)
		case "anycompatiblearray":
			if a != Literal {
				a = element(a)
			}
			compat = append(compat, a)
		}
	}
	common := ""
	if len(compat) > 0 {
		if common = CommonType(compat); common == "" && !slices.Contains(compat, "") {
			return "" // PostgreSQL fails
		}
	}
	switch o.Result {
	case "anyelement", "anynonarray":
		if unknown {
			return ""
		}
		return elem
	case "anyarray":
		if unknown || elem == "" {
			return ""
		}
		return "_" + elem
	case "anycompatible", "anycompatiblenonarray":
		return common
	case "anycompatiblearray":
		if common == "" {
			return ""
		}
		return "_" + common
	}
	return o.Result
}

// anyElementKnown reports whether an overload with anyelement, anyarray
// or anynonarray arguments gets one that is not an untyped literal:
// PostgreSQL cannot tell the polymorphic type from literals alone (an
// anycompatible it makes text).
func anyElementKnown(o *Overload, args []string) bool {
	poly := false
	for i, a := range args {
		switch o.arg(i) {
		case "anyelement", "anynonarray", "anyarray":
			if a != Literal {
				return true
			}
			poly = true
		}
	}
	return !poly
}
