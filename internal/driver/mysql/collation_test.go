package mysql_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/driver/mysql"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestCollationScripts drives mysql.Open, the driver's own open path,
// against a scripted server: each file of testdata/collation says which
// collation the server's sessions start in, what it does with the SET
// of collation_connection the driver sends (takes it, ignores it as a
// proxy that resets sessions would, or refuses it as a server that lacks
// the collation does), and what Open must then do: accept the replica, or
// refuse it with the exact SQLSTATE and message naming it (issue 14, item
// 12: text must compare byte-wise, without padding, as PostgreSQL's C
// collation does). The server speaks MySQL's protocol as far as the
// driver's start-up goes. Each script also checks that the driver read
// the session's collation back, so that dropping the SET fails the
// accepting scripts and dropping the check the ignoring one.
// TestSessionComparesByteWise shows the collation's effect on a real
// MariaDB.
func TestCollationScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "collation", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/collation: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			sc := readCollationScript(t, file)
			srv := startCollationServer(t, sc)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			e, err := mysql.Open(ctx, driver.Spec{Name: "maria1", DSN: "shepherd@tcp(" + srv.addr + ")/app"})
			if e != nil {
				e.Close()
			}
			srv.stop()
			if !srv.asked.Load() && sc.onSet != "refuses" {
				t.Errorf("%s: Open never read the session's collation", file)
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
			if got := pe.Code + " " + pe.Message; got != sc.want || pe.Replica != "maria1" {
				t.Errorf("%s: Open refused with (replica %q)\n  %s\nwant\n  %s", file, pe.Replica, got, sc.want)
			}
		})
	}
}

// collationScript is one file of testdata/collation.
type collationScript struct {
	// initial is the collation_connection a session starts in.
	initial string
	// onSet is what the server does with SET collation_connection:
	// "takes" it, "ignores" it (answers OK, changes nothing) or "refuses"
	// it (ER_UNKNOWN_COLLATION).
	onSet string
	// want is "accepted" or "SQLSTATE message".
	want string
}

func readCollationScript(t *testing.T, file string) collationScript {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sc collationScript
	fields := map[string]*string{"initial": &sc.initial, "on-set": &sc.onSet, "want": &sc.want}
	seen := map[string]bool{}
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		p := fields[key]
		if p == nil || seen[key] {
			t.Fatalf("%s:%d: unknown or repeated line %q (want initial, on-set, want)", file, n, line)
		}
		seen[key], *p = true, val
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(fields) {
		t.Fatalf("%s: want each of initial, on-set, want once", file)
	}
	switch sc.onSet {
	case "takes", "ignores", "refuses":
	default:
		t.Fatalf("%s: on-set %q, want takes, ignores or refuses", file, sc.onSet)
	}
	return sc
}

// collationServer is a MySQL server as far as the driver's start-up goes:
// the handshake (any user, no password), the session's SETs, and the
// query of the session's id, packet limit and collation.
type collationServer struct {
	addr  string
	ln    net.Listener
	wg    sync.WaitGroup
	asked atomic.Bool
}

func startCollationServer(t *testing.T, sc collationScript) *collationServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &collationServer{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(s.stop)
	s.wg.Go(func() {
		for id := uint32(1); ; id++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() {
				defer nc.Close()
				if err := s.serve(nc, id, sc); err != nil && !errors.Is(err, io.EOF) {
					t.Errorf("scripted server: %v", err)
				}
			})
		}
	})
	return s
}

func (s *collationServer) stop() {
	s.ln.Close()
	s.wg.Wait()
}

// Capability flags the server offers: CLIENT_LONG_PASSWORD (read by the
// driver as "MySQL, not MariaDB": no extended capabilities),
// CLIENT_PROTOCOL_41, CLIENT_TRANSACTIONS, CLIENT_SECURE_CONNECTION,
// CLIENT_PLUGIN_AUTH. Without CLIENT_DEPRECATE_EOF, result sets end in
// EOF packets.
const serverCaps = 1 | 0x200 | 0x2000 | 0x8000 | 0x80000

// mysqlConn frames packets: a 3-byte length, a sequence number.
type mysqlConn struct {
	nc  net.Conn
	seq byte
}

func (c *mysqlConn) read() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c.nc, h[:]); err != nil {
		return nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	c.seq = h[3] + 1
	b := make([]byte, n)
	_, err := io.ReadFull(c.nc, b)
	return b, err
}

func (c *mysqlConn) write(payload []byte) error {
	h := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), c.seq}
	c.seq++
	_, err := c.nc.Write(append(h, payload...))
	return err
}

func lenenc(b []byte, s string) []byte { return append(append(b, byte(len(s))), s...) }

func okPacket() []byte  { return []byte{0x00, 0, 0, 2, 0, 0, 0} }
func eofPacket() []byte { return []byte{0xfe, 0, 0, 2, 0} }

func errPacket(code uint16, state, msg string) []byte {
	b := []byte{0xff, byte(code), byte(code >> 8), '#'}
	return append(append(b, state...), msg...)
}

func (s *collationServer) serve(nc net.Conn, id uint32, sc collationScript) error {
	if err := nc.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return err
	}
	c := &mysqlConn{nc: nc}
	// Handshake v10.
	g := []byte{10}
	g = append(g, "10.11.0-scripted\x00"...)
	g = binary.LittleEndian.AppendUint32(g, id)
	g = append(g, "abcdefgh"...) // scramble, first part
	g = append(g, 0)
	g = binary.LittleEndian.AppendUint16(g, serverCaps&0xffff)
	g = append(g, 45) // utf8mb4_general_ci
	g = binary.LittleEndian.AppendUint16(g, 2)
	g = binary.LittleEndian.AppendUint16(g, serverCaps>>16)
	g = append(g, 21)
	g = append(g, make([]byte, 10)...)
	g = append(g, "ijklmnopqrst\x00"...) // scramble, second part
	g = append(g, "mysql_native_password\x00"...)
	if err := c.write(g); err != nil {
		return err
	}
	if _, err := c.read(); err != nil { // the client's handshake response
		return err
	}
	if err := c.write(okPacket()); err != nil {
		return err
	}
	collation := sc.initial
	for {
		p, err := c.read()
		if err != nil {
			return err
		}
		if len(p) == 0 {
			return fmt.Errorf("empty command")
		}
		switch p[0] {
		case 0x01: // COM_QUIT
			return nil
		case 0x03: // COM_QUERY
		default:
			return fmt.Errorf("unexpected command %#x", p[0])
		}
		q := string(p[1:])
		var out [][]byte
		switch {
		case strings.HasPrefix(q, "SET ") && strings.Contains(q, "collation_connection"):
			switch sc.onSet {
			case "takes":
				i := strings.Index(q, "'")
				collation = strings.Trim(q[i:], "'")
				out = append(out, okPacket())
			case "ignores":
				out = append(out, okPacket())
			default:
				out = append(out, errPacket(1273, "HY000", "Unknown collation: 'utf8mb4_nopad_bin'"))
			}
		case strings.HasPrefix(q, "SET "):
			out = append(out, okPacket())
		case strings.Contains(q, "CONNECTION_ID()") && strings.Contains(q, "@@collation_connection"):
			s.asked.Store(true)
			cols := []string{"CONNECTION_ID()", "@@max_allowed_packet", "@@collation_connection"}
			out = append(out, []byte{byte(len(cols))})
			for i, name := range cols {
				// catalog, schema, table, org_table, name, org_name;
				// then the fixed fields: charset, length, type, flags,
				// decimals, filler.
				d := lenenc(nil, "def")
				d = lenenc(lenenc(lenenc(lenenc(lenenc(d, ""), ""), ""), name), "")
				d = append(d, 0x0c, 45, 0)
				d = binary.LittleEndian.AppendUint32(d, 64)
				typ := byte(0x08) // LONGLONG
				if i == 2 {
					typ = 0xfd // VAR_STRING
				}
				d = append(d, typ, 0, 0, 0, 0, 0)
				out = append(out, d)
			}
			out = append(out, eofPacket())
			out = append(out, lenenc(lenenc(lenenc(nil, fmt.Sprint(id)), "16777216"), collation))
			out = append(out, eofPacket())
		default:
			out = append(out, errPacket(1064, "42000", "the scripted server answers only the driver's start-up"))
		}
		for _, b := range out {
			if err := c.write(b); err != nil {
				return err
			}
		}
	}
}
