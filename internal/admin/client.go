package admin

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// Login is how a client of the admin console reaches a running shepherd.
type Login struct {
	Addr     string // host:port, as the config's listen
	User     string
	Password string
}

// URL returns the connection string of the admin console. It asks for TLS
// and goes on in the clear when the server offers none (sslmode=prefer):
// a server with [tls] require refuses the clear.
func (l Login) URL() string {
	u := url.URL{Scheme: "postgres", Host: l.Addr, Path: "/" + Database, RawQuery: "sslmode=prefer"}
	if host, port, err := net.SplitHostPort(l.Addr); err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		u.Host = net.JoinHostPort("127.0.0.1", port)
	}
	if l.Password != "" {
		u.User = url.UserPassword(l.User, l.Password)
	} else {
		u.User = url.User(l.User)
	}
	return u.String()
}

// Compare runs CHECK (or REPAIR, when repair) [TABLE table] on the running
// shepherd l reaches and returns the rows, each with the columns' names.
func Compare(ctx context.Context, l Login, repair bool, table string) (cols []string, rows [][]string, err error) {
	conn, err := pgx.Connect(ctx, l.URL())
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close(context.Background())
	cmd := "CHECK"
	if repair {
		cmd = "REPAIR"
	}
	if table != "" {
		cmd += " TABLE " + pgx.Identifier{table}.Sanitize()
	}
	res, err := conn.Query(ctx, cmd, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, nil, err
	}
	defer res.Close()
	for _, f := range res.FieldDescriptions() {
		cols = append(cols, f.Name)
	}
	for res.Next() {
		vals, err := res.Values()
		if err != nil {
			return nil, nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = fmt.Sprint(v)
		}
		rows = append(rows, row)
	}
	return cols, rows, res.Err()
}
