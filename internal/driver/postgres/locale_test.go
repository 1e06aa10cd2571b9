package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/postgres"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestLocaleScripts drives postgres.Open, the driver's own open path,
// against a scripted server: each file of testdata/locale says what the
// replica's database reports (its pg_database row: name, LC_COLLATE,
// LC_CTYPE, locale provider, ICU or builtin locale) and what Open must
// do with it: accept it, or refuse it with the exact SQLSTATE and message
// naming the replica (issue 14, item 12: a replica that does not compare
// text byte-wise would lose votes it should win, or win them against
// correct replicas). The server speaks PostgreSQL's protocol and answers
// only the start-up and a query of pg_database; each script also checks
// that Open asked it, so that dropping the check from Open fails the
// accepting scripts as well as the refusing ones. TestRefusesNonCCollation
// shows the refused locales differ on a real PostgreSQL.
func TestLocaleScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "locale", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/locale: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			sc := readLocaleScript(t, file)
			srv := startLocaleServer(t, sc.row)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			dsn := fmt.Sprintf("postgres://shepherd@%s/%s?sslmode=disable", srv.addr, sc.row[0])
			e, err := postgres.Open(ctx, driver.Spec{Name: "pg1", DSN: dsn})
			if e != nil {
				e.Close()
			}
			srv.stop()
			if !srv.asked.Load() {
				t.Errorf("%s: Open never read the database's locale", file)
			}
			if sc.want == "accepted" {
				if err != nil {
					t.Errorf("%s: Open refused the replica: %v, want it accepted", file, err)
				}
				return
			}
			var pe *pgerr.Error
			if !errors.As(err, &pe) {
				t.Fatalf("%s: Open gave %v, want %s", file, err, sc.want)
			}
			if got := pe.Code + " " + pe.Message; got != sc.want || pe.Replica != "pg1" {
				t.Errorf("%s: Open refused with (replica %q)\n  %s\nwant\n  %s", file, pe.Replica, got, sc.want)
			}
		})
	}
}

// localeScript is one file of testdata/locale: the pg_database row the
// server reports (datname, datcollate, datctype, datlocprovider,
// datlocale, as the driver's query reads them) and the outcome wanted,
// "accepted" or "SQLSTATE message".
type localeScript struct {
	row  [5]string
	want string
}

func readLocaleScript(t *testing.T, file string) localeScript {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sc localeScript
	seen := map[string]bool{}
	fields := []string{"datname", "datcollate", "datctype", "datlocprovider", "datlocale"}
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		if seen[key] {
			t.Fatalf("%s:%d: %s given twice", file, n, key)
		}
		seen[key] = true
		if key == "want" {
			sc.want = val
			continue
		}
		i := 0
		for i < len(fields) && fields[i] != key {
			i++
		}
		if i == len(fields) {
			t.Fatalf("%s:%d: unknown line %q (want one of %v or want)", file, n, line, fields)
		}
		sc.row[i] = val
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(fields, "want") {
		if !seen[k] {
			t.Fatalf("%s: no %s line", file, k)
		}
	}
	return sc
}

// localeServer is a PostgreSQL server as far as the driver's Open goes:
// it lets any user in, answers the query of pg_database with its one row
// and any other statement with an error.
type localeServer struct {
	addr  string
	ln    net.Listener
	wg    sync.WaitGroup
	asked atomic.Bool
}

func startLocaleServer(t *testing.T, row [5]string) *localeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &localeServer{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(s.stop)
	s.wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() {
				defer nc.Close()
				if err := s.serve(nc, row); err != nil {
					t.Errorf("scripted server: %v", err)
				}
			})
		}
	})
	return s
}

// stop closes the listener and waits for every connection to end (the
// driver closes its own: Open keeps none).
func (s *localeServer) stop() {
	s.ln.Close()
	s.wg.Wait()
}

func (s *localeServer) serve(nc net.Conn, row [5]string) error {
	if err := nc.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return err
	}
	be := pgproto3.NewBackend(nc, nc)
	if _, err := be.ReceiveStartupMessage(); err != nil {
		return err
	}
	be.Send(&pgproto3.AuthenticationOk{})
	be.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "15.0"})
	be.Send(&pgproto3.ParameterStatus{Name: "client_encoding", Value: "UTF8"})
	be.Send(&pgproto3.BackendKeyData{ProcessID: 1, SecretKey: []byte{0, 0, 0, 1}})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := be.Flush(); err != nil {
		return err
	}
	for {
		msg, err := be.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.Terminate:
			return nil
		case *pgproto3.Query:
			if !strings.Contains(m.String, "pg_database") || !strings.Contains(m.String, "datcollate") {
				be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "0A000", Message: "the scripted server answers only the locale query"})
				be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
				break
			}
			s.asked.Store(true)
			fields := make([]pgproto3.FieldDescription, len(row))
			values := make([][]byte, len(row))
			for i := range row {
				fields[i] = pgproto3.FieldDescription{Name: fmt.Appendf(nil, "c%d", i), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}
				values[i] = []byte(row[i])
			}
			be.Send(&pgproto3.RowDescription{Fields: fields})
			be.Send(&pgproto3.DataRow{Values: values})
			be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		default:
			return fmt.Errorf("unexpected %T from the driver", msg)
		}
		if err := be.Flush(); err != nil {
			return err
		}
	}
}
