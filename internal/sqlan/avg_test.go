package sqlan

import (
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// TestQuotientAsPostgres: the text PostgreSQL 15 gives for avg() of the
// values behind each sum/count (taken from real PostgreSQL; the engines
// agree through TestAverages).
func TestQuotientAsPostgres(t *testing.T) {
	for parts, want := range map[string]string{
		"7/3":                   "2.3333333333333333",     // avg of 1, 2, 4 (int)
		"27.02/3":               "9.0066666666666667",     // numeric(12,2)
		"0.0007/3":              "0.00023333333333333333", // a small mean: more decimals
		"123456.7892/2":         "61728.394600000000",
		"9999999999.98/2":       "4999999999.99000000",
		"2147483640/2":          "1073741820.00000000",
		"0.05/1":                "0.05000000000000000000",
		"10/4":                  "2.5000000000000000",
		"-10/4":                 "-2.5000000000000000",
		"-2/3":                  "-0.66666666666666666667", // half away from zero
		"0.0000/1":              "0.00000000000000000000",
		"100/3":                 "33.3333333333333333",
		"-0.01/1":               "-0.01000000000000000000",
		"9000000000000000008/6": "1500000000000000001", // 16 digits are all before the point
	} {
		got, ok := pgQuotient(parts)
		if !ok || got != want {
			t.Errorf("%s: %q, want %q", parts, got, want)
		}
	}
	for _, bad := range []string{"", "1", "1/0", "a/1", "1.2.3/1", "1/2/3/4"} {
		if got, ok := pgQuotient(bad); ok {
			t.Errorf("%q: %q", bad, got)
		}
	}
}

// TestVarianceAsPostgres: the text PostgreSQL 15 gives for stddev,
// stddev_pop, var_samp and var_pop of the int4 values behind each
// count;sum;sum of squares (taken from real PostgreSQL: the values in the
// comments, through unnest).
func TestVarianceAsPostgres(t *testing.T) {
	for _, c := range []struct{ parts, stddev, stddevPop, varSamp, varPop string }{
		{"3;7;21", "1.5275252316519467", "1.2472191289246471", "2.3333333333333333", "1.5555555555555556"}, // 1, 2, 4
		{"2;10;50", "0", "0", "0", "0"}, // 5, 5
		{"2;1000001;1000000000001", "707106.07407977", "499999.50000000", "499999000000.50000000", "249999500000.25000000"}, // 1, 1000000
		{"3;15;179", "7.2111025509279786", "5.8878405775518979", "52.0000000000000000", "34.6666666666666667"},              // -3, 7, 11
		{"2;1;1", "0.70710678118654752440", "0.50000000000000000000", "0.50000000000000000000", "0.25000000000000000000"},   // 0, 1
		{"4;0;2147418114", "26754.55172489", "23170.12146062", "715806038.00000000", "536854528.50000000"},                  // 32767, -32768, 0, 1
	} {
		for name, want := range map[string]string{"stddev": c.stddev, "stddev_samp": c.stddev, "stddev_pop": c.stddevPop,
			"variance": c.varSamp, "var_samp": c.varSamp, "var_pop": c.varPop} {
			got, null, ok := pgVariance(c.parts, name)
			if !ok || null || got != want {
				t.Errorf("%s of %s: %q (null %v, ok %v), want %q", name, c.parts, got, null, ok, want)
			}
		}
	}
	// numeric(9,2) 1.25, -3.33, 9999999.99, 0.01: the sum has the
	// values' scale, the squares are in units of 10^-4.
	for name, want := range map[string]string{"stddev:2": "5000000.3400", "stddev_pop:2": "4330127.3134",
		"var_samp:2": "25000003400003.8567", "var_pop:2": "18750002550002.8925"} {
		if got, null, ok := pgVariance("4;9999997.92;999999998000126516", name); !ok || null || got != want {
			t.Errorf("%s: %q (null %v, ok %v), want %q", name, got, null, ok, want)
		}
	}
	if got, _, ok := pgVariance("4;9999997.9;999999998000126516", "stddev:2"); ok {
		t.Errorf("a sum of another scale: %q", got)
	}
	// One value: NULL for a sample, 0 for a population.
	if _, null, ok := pgVariance("1;5;25", "stddev"); !ok || !null {
		t.Errorf("stddev of one value: null %v ok %v, want NULL", null, ok)
	}
	if got, null, ok := pgVariance("1;5;25", "var_pop"); !ok || null || got != "0" {
		t.Errorf("var_pop of one value: %q null %v ok %v, want 0", got, null, ok)
	}
	for _, bad := range []string{"", "1;2", "a;1;1", "1;2;3;4", "1.5;1;1"} {
		if got, _, ok := pgVariance(bad, "stddev"); ok {
			t.Errorf("%q: %q", bad, got)
		}
	}
}

// TestAvgArithAsPostgres: avg(x) op c and c op avg(x) on PostgreSQL
// 15's text of the average, as PostgreSQL answers them (taken from real
// PostgreSQL: the averages of int 1, 2 and of numeric(12,2) 27.02, 0).
func TestAvgArithAsPostgres(t *testing.T) {
	for _, c := range []struct {
		q     string
		arith avgArith
		want  string
	}{
		{"1.5000000000000000", avgArith{op: "*", c: "2"}, "3.0000000000000000"},
		{"1.5000000000000000", avgArith{op: "-", c: "100", first: true}, "98.5000000000000000"},
		{"13.5100000000000000", avgArith{op: "+", c: "1.5"}, "15.0100000000000000"},
		{"13.5100000000000000", avgArith{op: "*", c: "-2", first: true}, "-27.0200000000000000"},
		{"0.00000000000000000000", avgArith{op: "*", c: "-2", first: true}, "0.00000000000000000000"},
		{"0.00000000000000000000", avgArith{op: "-", c: "0.005"}, "-0.00500000000000000000"},
		{"13.5100000000000000", avgArith{op: "-", c: "0.005"}, "13.5050000000000000"},
		{"1.5000000000000000", avgArith{op: "/", c: "7"}, "0.21428571428571428571"},
	} {
		got, ok := c.arith.apply(c.q)
		if !ok || got != c.want {
			t.Errorf("%s %+v: %q, want %q", c.q, c.arith, got, c.want)
		}
	}
}

// TestAveragesAskedAsParts: avg() result columns of exact values, bare
// or in round(), reach every replica as sum/count; over floats they stay
// avg(); elsewhere avg() of exact values is refused for MariaDB and
// SQLite.
func TestAveragesAskedAsParts(t *testing.T) {
	env := envWith(t, "CREATE TABLE t (id serial PRIMARY KEY, a int, n numeric(12,2), f float8, g text)")
	for _, q := range []string{
		"SELECT DISTINCT avg(n) FROM t GROUP BY g",
		"SELECT avg(n) FROM t UNION SELECT avg(a) FROM t",
		"SELECT round(avg(n) * a, 2) FROM t GROUP BY a",
		"SELECT avg(n)::numeric(11,3) FROM t", // 9999999999.99 does not fit
	} {
		if _, err := ParseOneIn(q, env); err == nil || !contains(err.Error(), "avg()") {
			t.Errorf("%s: %v, want avg() refused", q, err)
		}
	}
	for q, want := range map[string][]int{
		"SELECT avg(n), avg(a), avg(f) FROM t":                       {0, 1},
		"SELECT g, avg(n) AS m FROM t GROUP BY g":                    {1},
		"SELECT round(avg(n), 2), round(avg(a)), count(f) FROM t":    {0, 1},
		"SELECT avg(f) * 2, round(avg(f)::numeric, 2) FROM t":        nil,
		"SELECT g FROM t GROUP BY g ORDER BY round(avg(n), 1)":       nil,
		"SELECT avg(a) OVER (PARTITION BY g) FROM t":                 {0},
		"SELECT avg(a) OVER (PARTITION BY g) + 1 FROM t":             {0},
		"SELECT round(avg(n) * 2, 2), 100 - avg(a) FROM t":           {0, 1},
		"SELECT avg(n)::numeric(13,3), avg(a)::numeric(12,2) FROM t": {0, 1},
		"SELECT avg(a) OVER (PARTITION BY g) + a FROM t":             {0},
		"SELECT - avg(n), count(*) + avg(a) * 2, + avg(n) FROM t":    {0, 1, 2},
		"SELECT DISTINCT - avg(n), min(a) FROM t":                    {0},
	} {
		st, err := ParseOneIn(q, env)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(st.quotients) != len(want) {
			t.Errorf("%s: quotients %v, want %v", q, st.quotients, want)
			continue
		}
		for i, c := range st.Columns() {
			if c.quotient != (indexOf(want, i) >= 0) {
				t.Errorf("%s: column %d quotient %v", q, i, c.quotient)
			}
		}
		if len(want) > 0 {
			if text, _ := st.For(driver.MySQL); !contains(text, "SUM(") {
				t.Errorf("%s: MariaDB form %s", q, text)
			}
		}
	}
}

// TestAvgTreeAsPostgres: arithmetic on averages computed from the
// replicas' parts as PostgreSQL 15's numeric computes it (the wants are
// PostgreSQL's answers to the same arithmetic on avg()).
func TestAvgTreeAsPostgres(t *testing.T) {
	env := envWith(t, "CREATE TABLE t (id serial PRIMARY KEY, a int, n numeric(12,2))")
	for _, c := range []struct {
		q, parts, want string
		null           bool
	}{
		// SELECT - avg(a) FROM (VALUES (1), (2), (4)) v(a)
		{"SELECT - avg(a) FROM t", "7/3", "-2.3333333333333333", false},
		// 3 + avg(a) * 2 over 1, 2, 4
		{"SELECT count(*) + avg(a) * 2 FROM t", "3|7/3", "7.6666666666666666", false},
		// avg(n) * avg(a) - 1 over n 0.05, 0.06 and a 1, 2, 4
		{"SELECT avg(n) * avg(a) - 1 FROM t", "0.11/2|7/3", "-0.871666666666666668500000000000000000", false},
		{"SELECT (avg(a) + 2) / 3 FROM t", "7/3", "1.4444444444444444", false},
		{"SELECT - avg(a) FROM t", "0/2", "0.00000000000000000000", false},
		{"SELECT min(a) * avg(a) FROM t", "NULL|7/3", "", true},
	} {
		st, err := ParseOneIn(c.q, env)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		tree := st.trees[0]
		if tree == nil {
			t.Fatalf("%s: no arithmetic on averages", c.q)
		}
		parts := c.parts
		null := false
		if strings.Contains(parts, "NULL") {
			parts, null = strings.ReplaceAll(parts, "NULL", "x"), true
		}
		got, gotNull, ok := tree.eval(parts)
		if null {
			// A NULL leaf makes the replicas' || NULL: the row holds
			// NULL, which ShapeAnswer never evaluates.
			continue
		}
		if !ok || got != c.want || gotNull != c.null {
			t.Errorf("%s of %s: %q null %v ok %v, want %q", c.q, c.parts, got, gotNull, ok, c.want)
		}
	}
}

// TestRoundAsPostgres: round(numeric, int) as PostgreSQL 15 writes it.
func TestRoundAsPostgres(t *testing.T) {
	for _, c := range []struct {
		v      string
		places int
		want   string
	}{
		{"2.3333333333333333", 17, "2.33333333333333330"},
		{"0.0550000000000000", 2, "0.06"},
		{"-0.0550000000000000", 2, "-0.06"},
		{"-0.0040000000000000", 2, "0.00"},
		{"1125000000000000002.5", -2, "1125000000000000000"},
		{"1125000000000000002.5", 0, "1125000000000000003"},
		{"150", -2, "200"},
		{"49", -2, "0"},
		{"7", 3, "7.000"},
	} {
		if got, ok := pgRound(c.v, c.places); !ok || got != c.want {
			t.Errorf("round(%s, %d) = %s, %v; want %s", c.v, c.places, got, ok, c.want)
		}
	}
}

func indexOf(xs []int, x int) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// TestAveragesOnOneReplica: a cluster of one MariaDB replica asks for
// avg() as sum and count too (its own digits are not PostgreSQL's).
func TestAveragesOnOneReplica(t *testing.T) {
	env := envWith(t, "CREATE TABLE t (id serial PRIMARY KEY, a int, n numeric(12,2))")
	env.Replicas = map[driver.Dialect][]string{driver.MySQL: {"maria"}}
	st, err := ParseOneIn("SELECT avg(n), round(avg(a), 2) FROM t", env)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.quotients) != 2 {
		t.Errorf("quotients %v, want both columns", st.quotients)
	}
	if text, _ := st.For(driver.MySQL); !contains(text, "SUM(") {
		t.Errorf("MariaDB form %s", text)
	}
}
