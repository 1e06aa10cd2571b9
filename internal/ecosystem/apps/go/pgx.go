package main

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// pgxApp: pgx v5 with default options (extended protocol, statement
// cache): DDL, CRUD with typed parameters (numeric, jsonb), a transaction
// with a nested one (savepoint) rolled back after a unique violation,
// CopyFrom, and a Batch.
func pgxApp(url string) app {
	ctx := context.Background()
	var c *pgx.Conn
	return app{
		{"connect", func() (err error) { c, err = pgx.Connect(ctx, url); return }},
		{"create_schema", func() error {
			_, err := c.Exec(ctx, `CREATE TABLE warehouse (id serial PRIMARY KEY, code text NOT NULL UNIQUE);
				CREATE TABLE item (id bigserial PRIMARY KEY,
					warehouse_id integer NOT NULL REFERENCES warehouse(id),
					sku text NOT NULL, qty integer NOT NULL DEFAULT 0,
					cost numeric(12,2) NOT NULL, attrs jsonb,
					UNIQUE (warehouse_id, sku))`)
			return err
		}},
		{"crud", func() error {
			var wid int32
			if err := c.QueryRow(ctx, "INSERT INTO warehouse (code) VALUES ($1) RETURNING id", "north").Scan(&wid); err != nil {
				return err
			}
			var cost pgtype.Numeric
			if err := cost.Scan("19.95"); err != nil {
				return err
			}
			if _, err := c.Exec(ctx, "INSERT INTO item (warehouse_id, sku, qty, cost, attrs) VALUES ($1, $2, $3, $4, $5)",
				wid, "bolt", 10, cost, map[string]any{"size": "M6"}); err != nil {
				return err
			}
			tag, err := c.Exec(ctx, "UPDATE item SET qty = qty + $1 WHERE sku = $2", 5, "bolt")
			if err != nil {
				return err
			}
			if err := check(tag.RowsAffected() == 1, "update affected %d", tag.RowsAffected()); err != nil {
				return err
			}
			var qty int
			var got string
			var attrs map[string]any
			if err := c.QueryRow(ctx, "SELECT qty, cost::text, attrs FROM item WHERE sku = $1", "bolt").Scan(&qty, &got, &attrs); err != nil {
				return err
			}
			return check(qty == 15 && got == "19.95" && attrs["size"] == "M6", "read back %d %s %v", qty, got, attrs)
		}},
		{"nested_transaction", func() error {
			tx, err := c.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "INSERT INTO warehouse (code) VALUES ('south')"); err != nil {
				return err
			}
			sp, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			_, err = sp.Exec(ctx, "INSERT INTO warehouse (code) VALUES ('north')")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "23505" {
				return check(false, "duplicate code: want 23505, got %v", err)
			}
			if err := sp.Rollback(ctx); err != nil {
				return err
			}
			if err := tx.Commit(ctx); err != nil {
				return err
			}
			var n int
			if err := c.QueryRow(ctx, "SELECT count(*) FROM warehouse").Scan(&n); err != nil {
				return err
			}
			return check(n == 2, "warehouses %d", n)
		}},
		{"copy_from", func() error {
			rows := make([][]any, 200)
			for i := range rows {
				rows[i] = []any{int32(1), "sku" + string(rune('a'+i%26)) + string(rune('a'+i/26)), int32(i), "1.50"}
			}
			n, err := c.CopyFrom(ctx, pgx.Identifier{"item"}, []string{"warehouse_id", "sku", "qty", "cost"}, pgx.CopyFromRows(rows))
			if err != nil {
				return err
			}
			return check(n == 200, "copied %d", n)
		}},
		{"batch", func() error {
			b := &pgx.Batch{}
			b.Queue("UPDATE item SET qty = qty - 1 WHERE warehouse_id = $1", 1)
			b.Queue("SELECT count(*), sum(qty) FROM item")
			b.Queue("INSERT INTO warehouse (code) VALUES ($1)", "east")
			br := c.SendBatch(ctx, b)
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			var n, sum int64
			if err := br.QueryRow().Scan(&n, &sum); err != nil {
				return err
			}
			if _, err := br.Exec(); err != nil {
				return err
			}
			if err := br.Close(); err != nil {
				return err
			}
			return check(tag.RowsAffected() == 201 && n == 201 && sum == 15+19900-201, "batch %d %d %d", tag.RowsAffected(), n, sum)
		}},
		{"close", func() error { return c.Close(ctx) }},
	}
}
