package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/shepherd-db/shepherd/internal/driver"
)

// Engines are the database servers a benchmark runs on. Each run gets
// databases of its own on them, created before and dropped after, so the
// users must be allowed to create databases.
type Engines struct {
	// MariaDB is a go-sql-driver/mysql DSN; its database name is ignored.
	MariaDB string
	// Postgres is a postgres:// URL; its database is used to create and
	// drop the others.
	Postgres string
	// SQLiteDir holds the SQLite database files.
	SQLiteDir string
	// SQLiteDriver is shepherd's SQLite driver, "sqlite" (pure Go,
	// default) or "sqlite-cgo".
	SQLiteDriver string
}

// Databases are one set of fresh databases, one per engine that has one.
type Databases struct {
	MariaDB  string // go-sql-driver DSN, "" without a MariaDB
	Postgres string // URL, "" without a PostgreSQL
	SQLite   string // file path, "" without a SQLite directory
	// SecondMariaDB is another MariaDB database, for ModeCBSLocking.
	SecondMariaDB string
	drops         []func(context.Context) error
}

// Drop drops the databases.
func (d *Databases) Drop(ctx context.Context) error {
	var errs []error
	for _, f := range d.drops {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

var freshCounter atomic.Int64

// Fresh creates an empty database on every engine, named after tag.
func (e *Engines) Fresh(ctx context.Context, tag string) (*Databases, error) {
	name := fmt.Sprintf("shb_%d_%d_%s", os.Getpid(), freshCounter.Add(1), safeName(tag))
	d := &Databases{}
	fail := func(err error) (*Databases, error) {
		_ = d.Drop(context.WithoutCancel(ctx))
		return nil, err
	}
	if e.MariaDB != "" {
		cfg, err := mysql.ParseDSN(e.MariaDB)
		if err != nil {
			return nil, fmt.Errorf("bench: MariaDB DSN: %w", err)
		}
		admin := cfg.Clone()
		admin.DBName = ""
		if err := mariaExec(ctx, admin, "CREATE DATABASE "+name); err != nil {
			return fail(fmt.Errorf("bench: MariaDB: create database %s: %w", name, err))
		}
		d.drops = append(d.drops, func(ctx context.Context) error {
			return mariaExec(ctx, admin, "DROP DATABASE IF EXISTS "+name)
		})
		cfg.DBName = name
		d.MariaDB = cfg.FormatDSN()
	}
	if e.Postgres != "" {
		u, err := url.Parse(e.Postgres)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return fail(fmt.Errorf("bench: PostgreSQL: want a postgres:// URL, got %q", e.Postgres))
		}
		admin := e.Postgres
		if err := pgExec(ctx, admin, "CREATE DATABASE "+name); err != nil {
			return fail(fmt.Errorf("bench: PostgreSQL: create database %s: %w", name, err))
		}
		d.drops = append(d.drops, func(ctx context.Context) error {
			return pgExec(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		})
		u.Path = "/" + name
		d.Postgres = u.String()
	}
	if e.SQLiteDir != "" {
		if err := os.MkdirAll(e.SQLiteDir, 0o755); err != nil {
			return fail(err)
		}
		path, err := filepath.Abs(filepath.Join(e.SQLiteDir, name+".db"))
		if err != nil {
			return fail(err)
		}
		d.SQLite = path
		d.drops = append(d.drops, func(context.Context) error {
			for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
				if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
			return nil
		})
	}
	return d, nil
}

// SQLite returns the SQLite driver name.
func (e *Engines) sqliteDriver() string {
	if e.SQLiteDriver == "" {
		return "sqlite"
	}
	return e.SQLiteDriver
}

func safeName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if len(out) > 30 {
		out = out[:30]
	}
	return out
}

func mariaExec(ctx context.Context, cfg *mysql.Config, stmts ...string) error {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func pgExec(ctx context.Context, url string, stmt string) error {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, stmt)
	return err
}

// Versions returns the engines' versions, by engine name; an engine that
// cannot be asked is reported with the error.
func (e *Engines) Versions(ctx context.Context) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out := map[string]string{}
	if e.MariaDB != "" {
		v, err := func() (string, error) {
			cfg, err := mysql.ParseDSN(e.MariaDB)
			if err != nil {
				return "", err
			}
			cfg.DBName = ""
			conn, err := mysql.NewConnector(cfg)
			if err != nil {
				return "", err
			}
			db := sql.OpenDB(conn)
			defer db.Close()
			var v string
			err = db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
			return "MariaDB " + v, err
		}()
		out["mariadb"] = versionOr(v, err)
	}
	if e.Postgres != "" {
		v, err := func() (string, error) {
			c, err := pgx.Connect(ctx, e.Postgres)
			if err != nil {
				return "", err
			}
			defer c.Close(context.Background())
			var v string
			err = c.QueryRow(ctx, "SHOW server_version").Scan(&v)
			return "PostgreSQL " + v, err
		}()
		out["postgres"] = versionOr(v, err)
	}
	if e.SQLiteDir != "" {
		v, err := sqliteVersion(ctx, e.sqliteDriver())
		out["sqlite"] = versionOr(v, err)
	}
	return out
}

func versionOr(v string, err error) string {
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return v
}

// sqliteVersion asks an in-memory database of shepherd's SQLite driver.
func sqliteVersion(ctx context.Context, name string) (string, error) {
	open, ok := driver.Lookup(name)
	if !ok {
		return "", fmt.Errorf("no driver %q", name)
	}
	dir, err := os.MkdirTemp("", "shb-version-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	e, err := open(ctx, driver.Spec{Name: "version", DSN: filepath.Join(dir, "v.db"), DataDir: dir})
	if err != nil {
		return "", err
	}
	defer e.Close()
	c, err := e.Connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	a, err := c.Exec(ctx, driver.Query{SQL: "SELECT sqlite_version()", ReturnsRows: true, Verb: "SELECT"})
	if err != nil {
		return "", err
	}
	if len(a.Rows) != 1 || len(a.Rows[0]) != 1 {
		return "", errors.New("no version row")
	}
	return "SQLite " + a.Rows[0][0].Text + " (" + name + ")", nil
}
