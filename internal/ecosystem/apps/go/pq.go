package main

import (
	"database/sql"
	"errors"

	"github.com/lib/pq"
)

// pqApp: lib/pq through database/sql: DDL, CRUD with array columns
// (pq.Array), a transaction, a unique violation with its SQLSTATE and
// constraint name.
func pqApp(url string) app {
	var db *sql.DB
	return app{
		{"connect", func() (err error) {
			if db, err = sql.Open("postgres", url+"?sslmode=disable"); err != nil {
				return err
			}
			return db.Ping()
		}},
		{"create_schema", func() error {
			_, err := db.Exec(`CREATE TABLE post (id serial PRIMARY KEY, slug text NOT NULL UNIQUE,
				tags text[] NOT NULL DEFAULT '{}', scores integer[], price numeric(8,2))`)
			return err
		}},
		{"arrays", func() error {
			if _, err := db.Exec("INSERT INTO post (slug, tags, scores, price) VALUES ($1, $2, $3, $4)",
				"hello", pq.Array([]string{"go", "sql"}), pq.Array([]int64{3, 5, 8}), "4.20"); err != nil {
				return err
			}
			var tags []string
			var scores []int64
			if err := db.QueryRow("SELECT tags, scores FROM post WHERE slug = $1", "hello").Scan(pq.Array(&tags), pq.Array(&scores)); err != nil {
				return err
			}
			if err := check(len(tags) == 2 && tags[1] == "sql" && len(scores) == 3 && scores[2] == 8, "arrays %v %v", tags, scores); err != nil {
				return err
			}
			var n int
			if err := db.QueryRow("SELECT count(*) FROM post WHERE $1 = ANY(tags)", "go").Scan(&n); err != nil {
				return err
			}
			return check(n == 1, "ANY(tags) %d", n)
		}},
		{"transaction", func() error {
			tx, err := db.Begin()
			if err != nil {
				return err
			}
			if _, err := tx.Exec("INSERT INTO post (slug, price) VALUES ($1, $2)", "second", "1.00"); err != nil {
				tx.Rollback()
				return err
			}
			if _, err := tx.Exec("UPDATE post SET price = price * 2"); err != nil {
				tx.Rollback()
				return err
			}
			if err := tx.Commit(); err != nil {
				return err
			}
			var sum string
			if err := db.QueryRow("SELECT sum(price)::text FROM post").Scan(&sum); err != nil {
				return err
			}
			return check(sum == "10.40", "sum %s", sum)
		}},
		{"unique_violation", func() error {
			_, err := db.Exec("INSERT INTO post (slug) VALUES ($1)", "hello")
			var pe *pq.Error
			if !errors.As(err, &pe) {
				return check(false, "duplicate slug: want a pq.Error, got %v", err)
			}
			return check(pe.Code == "23505" && pe.Constraint == "post_slug_key", "duplicate slug: code %s constraint %q", pe.Code, pe.Constraint)
		}},
		{"close", func() error { return db.Close() }},
	}
}
