//go:build cgo

package sqlite

func init() {
	for _, f := range mathFunctions(cLibm) {
		name := f.name
		switch {
		case f.n == 1 && (f.name == "sqrt" || f.name == "exp" || f.name == "ln" || f.name == "log" || f.name == "log10"):
			fn1 := f.fn1
			sharedMath = append(sharedMath, Shared{MathFunctionPrefix + f.name, 1, SharedFloat,
				func(a []any) (any, error) { return mathCheck([]any{name, fn1(a[0]), a[0]}) }})
		case f.n == 2 && f.name == "power":
			fn2 := f.fn2
			sharedMath = append(sharedMath, Shared{MathFunctionPrefix + f.name, 2, SharedFloat,
				func(a []any) (any, error) { return mathCheck([]any{name, fn2(a[0], a[1]), a[0], a[1]}) }})
		}
	}
}
