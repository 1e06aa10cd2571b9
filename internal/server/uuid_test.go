package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shepherd-db/shepherd/internal/testenv"
)

// uuidForms writes the 16 bytes b as a uuid in form i of the ones
// PostgreSQL reads: canonical, upper case, braces, no hyphens, a hyphen
// after every group of four digits.
func uuidForm(b [16]byte, i int) string {
	h := fmt.Sprintf("%x", b[:])
	canonical := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	switch i % 5 {
	case 1:
		return strings.ToUpper(canonical)
	case 2:
		return "{" + canonical + "}"
	case 3:
		return strings.ToUpper(h)
	case 4:
		var parts []string
		for j := 0; j < 32; j += 4 {
			parts = append(parts, h[j:j+4])
		}
		return strings.Join(parts, "-")
	}
	return canonical
}

// TestUUIDAsPostgreSQL: uuid columns accept, compare and order exactly
// what PostgreSQL does on every engine. Uuids (version 4, version 1 and
// plain random bytes, all of which PostgreSQL takes) in every input
// form PostgreSQL reads go in as constants and as parameters; ORDER BY
// gives PostgreSQL's order (MariaDB's UUID type orders them otherwise, and
// its primary was voted out), comparisons with another form of a value
// find it, and text PostgreSQL refuses fails with its 22P02 and message.
// The same script runs on PostgreSQL 15; the outcomes must be equal, and
// the replicas (MariaDB the primary) stay up and identical.
func TestUUIDAsPostgreSQL(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 6))
	var ids [][16]byte
	for range 40 {
		var b [16]byte
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		switch len(ids) % 3 {
		case 0: // version 4
			b[6] = b[6]&0x0f | 0x40
			b[8] = b[8]&0x3f | 0x80
		case 1: // version 1, which MariaDB's UUID type stores and orders with its groups swapped
			b[6] = b[6]&0x0f | 0x10
			b[8] = b[8]&0x3f | 0x80
		}
		ids = append(ids, b)
	}
	ctx := context.Background()
	run := func(dsn string) []string {
		c, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var out []string
		simple := func(sql string) {
			rs, err := c.Exec(ctx, sql).ReadAll()
			if err != nil {
				out = append(out, fmt.Sprintf("%s: %s", sql, renderErr(err)))
				return
			}
			for _, r := range rs {
				var rows []string
				for _, row := range r.Rows {
					var vs []string
					for _, v := range row {
						vs = append(vs, string(v))
					}
					rows = append(rows, strings.Join(vs, "|"))
				}
				out = append(out, fmt.Sprintf("%s: %s %s", sql, r.CommandTag, strings.Join(rows, "; ")))
			}
		}
		simple("CREATE TABLE u (id uuid PRIMARY KEY, n int)")
		simple("CREATE TABLE g (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), n int)")
		for i, b := range ids {
			if i%2 == 0 {
				simple(fmt.Sprintf("INSERT INTO u VALUES ('%s', %d)", uuidForm(b, i/2), i))
			} else {
				out = append(out, "param "+uuidForm(b, i/2)+": "+paramOutcome(ctx, c, "INSERT INTO u VALUES ($1, $2)", uuidForm(b, i/2), fmt.Sprint(i)))
			}
		}
		simple("SELECT id, n FROM u ORDER BY id")
		simple("SELECT id, n FROM u ORDER BY id DESC LIMIT 5")
		simple("SELECT min(id::text), max(id::text) FROM u")
		for i := range 5 {
			simple(fmt.Sprintf("SELECT n FROM u WHERE id = '%s'", uuidForm(ids[i], i+1)))
			out = append(out, "where param: "+paramOutcome(ctx, c, "SELECT n FROM u WHERE id = $1", uuidForm(ids[i], i+3)))
		}
		simple(fmt.Sprintf("SELECT n FROM u WHERE id IN ('%s', '%s') ORDER BY n", uuidForm(ids[5], 1), uuidForm(ids[6], 2)))
		simple(fmt.Sprintf("SELECT n FROM u WHERE id > '%s' ORDER BY id LIMIT 3", uuidForm(ids[7], 3)))
		simple(fmt.Sprintf("SELECT '%s'::uuid, CAST('%s' AS uuid)", uuidForm(ids[8], 1), uuidForm(ids[9], 4)))
		simple(fmt.Sprintf("UPDATE u SET n = -n WHERE id = '%s'", uuidForm(ids[10], 2)))
		simple(fmt.Sprintf("DELETE FROM u WHERE id = '%s'", uuidForm(ids[11], 3)))
		for _, bad := range []string{
			"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",   // a digit short
			"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111", // a digit more
			"{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", // an unclosed brace
			"a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11",  // a hyphen inside a group
			"a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", // two hyphens
			" a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", // a space
			"g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",  // not hex
			"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", // a trailing hyphen
		} {
			simple(fmt.Sprintf("INSERT INTO u VALUES ('%s', 0)", bad))
			simple(fmt.Sprintf("SELECT n FROM u WHERE id = '%s'", bad))
			out = append(out, "bad param "+bad+": "+paramOutcome(ctx, c, "INSERT INTO u VALUES ($1, 0)", bad))
		}
		simple("INSERT INTO g (n) VALUES (1), (2), (3)")
		simple("SELECT count(*), count(DISTINCT id) FROM g WHERE lower(id::text) = id::text AND length(id::text) = 36 AND substr(id::text, 15, 1) = '4'")
		simple("SELECT count(*) FROM u")
		return out
	}
	want := run(testenv.Postgres(t))
	cfg := realCluster(t, "cbs")
	addr, srv := start(t, cfg)
	got := run(fmt.Sprintf("postgres://app@%s/app?sslmode=disable", addr))
	for i := range want {
		if i >= len(got) {
			t.Fatalf("shepherd stopped after %d outcomes", len(got))
		}
		if got[i] != want[i] {
			t.Errorf("shepherd:      %s\nPostgreSQL 15: %s", got[i], want[i])
		}
	}
	assertReplicas(t, addr, 3)
	// A sequential secondary may still be applying what the client
	// was answered for (f+1 replicas suffice): read them once idle.
	if err := srv.Cluster().Idle(ctx); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, cfg, "SELECT id, n FROM u ORDER BY id")
	assertIdentical(t, cfg, "SELECT id, n FROM g ORDER BY n")
}

func renderErr(err error) string {
	if pe, ok := err.(*pgconn.PgError); ok {
		return "ERROR " + pe.Code + " " + pe.Message
	}
	return "ERROR " + err.Error()
}
