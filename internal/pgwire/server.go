package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/xdg-go/scram"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Defaults for the Server's limits.
const (
	DefaultMaxMessageBytes = 64 << 20
	DefaultAuthTimeout     = 60 * time.Second
	DefaultMaxStatements   = 10_000
	DefaultMaxPortals      = 10_000
	// DefaultServerVersion starts with a PostgreSQL version number, which
	// clients parse to decide which features they may use.
	DefaultServerVersion = "15.0 (shepherd)"
	// sessionCloseTimeout bounds Session.Close, which runs even when the
	// connection's context is already cancelled.
	sessionCloseTimeout = 30 * time.Second
)

// Server accepts PostgreSQL client connections and serves each one with a
// Session from Handler. Set the exported fields before the first Serve or
// ServeConn and do not change them afterwards; the zero value of every field
// but Handler is usable.
type Server struct {
	// Handler opens a Session per authenticated connection. Required.
	Handler Handler

	// Users maps user names to passwords. A user with an empty password is
	// let in without one (trust); any other user must authenticate with
	// SCRAM-SHA-256. An unknown user fails authentication exactly like a
	// wrong password. When Users is empty, every user name is trusted, but
	// only on loopback (and in-process) connections.
	Users map[string]string

	// Logger receives connection-level events; nil means slog.Default().
	Logger *slog.Logger

	// OnError, when set, is told of every error sent to a client (to log
	// and count them). It is called on the connection's goroutine and
	// must not block.
	OnError func(ErrorEvent)

	// MaxMessageBytes caps the body of one client message; a longer one
	// ends the connection with 08P01. 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int

	// AuthTimeout bounds the time from accepting a connection to the end
	// of authentication. 0 means DefaultAuthTimeout.
	AuthTimeout time.Duration

	// WriteTimeout bounds one write to a client: a client that reads
	// nothing for this long while shepherd has output for it (a client
	// that never reads its answer) loses its connection, and with it
	// its transaction and its locks, instead of holding them and its
	// answer in memory for ever. 0 means DefaultWriteTimeout; a
	// negative value, none (PostgreSQL's behaviour).
	WriteTimeout time.Duration

	// MaxStatements and MaxPortals cap the prepared statements and portals
	// one connection may hold at a time. 0 means the defaults.
	MaxStatements int
	MaxPortals    int

	// ServerVersion is reported as server_version; "" means
	// DefaultServerVersion.
	ServerVersion string

	// TLS, when set, is offered to clients: an SSLRequest is answered
	// 'S' and the connection goes on inside TLS. nil answers 'N'.
	TLS *tls.Config

	// RequireTLS refuses a StartupMessage that did not come inside TLS
	// with 28000, as a PostgreSQL with hostssl lines only does.
	// CancelRequests are served either way (their key is their proof).
	RequireTLS bool

	// Admit, when set, is asked about every StartupMessage before the
	// client authenticates; an error refuses the connection with it
	// (FATAL), as PostgreSQL refuses one it cannot serve now (57P03,
	// "the database system is not accepting connections") before
	// authentication. A standby shepherd node refuses clients this way:
	// libpq's and pgx's multi-host connection strings move on to the
	// next host. CancelRequests are served either way.
	Admit func() error

	// MaxConnections caps the connections past their StartupMessage
	// served at once; one more is told 53300 "sorry, too many clients
	// already", as PostgreSQL tells it past max_connections. 0 means no
	// cap.
	MaxConnections int

	// ReservedConnections of MaxConnections are kept for the users
	// Reserved accepts (nil: none): once no more are free, any other
	// user is told 53300 after authenticating, as PostgreSQL tells a
	// non-superuser past superuser_reserved_connections.
	ReservedConnections int
	Reserved            func(user string) bool

	mu struct {
		sync.Mutex
		// sessions finds a session by its BackendKeyData process id, for
		// CancelRequest.
		sessions map[uint32]cancelTarget
		// creds caches SCRAM credentials per configured user.
		creds map[string]scram.StoredCredentials
		// users, once SetUsers was called, replaces Users.
		users    map[string]string
		usersSet bool
		// mockSecret salts the fake credentials of unknown users, so that
		// the same unknown name always sees the same salt.
		mockSecret []byte
		// conns counts the connections holding a slot of MaxConnections.
		conns int
		// limits, once SetConnectionLimits is called, replace
		// MaxConnections and ReservedConnections.
		limits *[2]int
		// writeTimeout, once SetWriteTimeout is called, replaces
		// WriteTimeout for connections accepted afterwards.
		writeTimeout *time.Duration
	}
}

// DefaultWriteTimeout is WriteTimeout when unset.
const DefaultWriteTimeout = 5 * time.Minute

// SetWriteTimeout changes WriteTimeout of a serving Server for the
// connections it accepts afterwards.
func (s *Server) SetWriteTimeout(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.writeTimeout = &d
}

// writeTimeout returns the bound of one write to a client, 0 for none.
func (s *Server) writeTimeout() time.Duration {
	s.mu.Lock()
	d := s.WriteTimeout
	if s.mu.writeTimeout != nil {
		d = *s.mu.writeTimeout
	}
	s.mu.Unlock()
	switch {
	case d == 0:
		return DefaultWriteTimeout
	case d < 0:
		return 0
	}
	return d
}

// SetUsers replaces Users while the server runs (a configuration
// reload): connections authenticate against users from now on; sessions
// already open are left as they are, as PostgreSQL leaves them when a
// password changes.
func (s *Server) SetUsers(users map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.users, s.mu.usersSet = users, true
	s.mu.creds = nil // derived from the old passwords
}

// users returns the users authentication follows.
func (s *Server) users() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usersLocked()
}

func (s *Server) usersLocked() map[string]string {
	if s.mu.usersSet {
		return s.mu.users
	}
	return s.Users
}

// ErrorEvent is an error sent to a client (Server.OnError).
type ErrorEvent struct {
	// User and Database are the startup's ("" before it ends).
	User, Database string
	Remote         net.Addr
	// SQL is the text of the statement the error is about, as far as the
	// front knows it: the latest simple query, Parse or Execute ("" for
	// an error before any, or of the protocol).
	SQL string
	Err *pgerr.Error
}

// SetConnectionLimits changes MaxConnections and ReservedConnections of a
// serving Server (a configuration reload). Connections already in stay.
func (s *Server) SetConnectionLimits(maxConns, reserved int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.limits = &[2]int{maxConns, reserved}
}

// limitsLocked returns the connection cap and its reserve.
func (s *Server) limitsLocked() (maxConns, reserved int) {
	if l := s.mu.limits; l != nil {
		return l[0], l[1]
	}
	return s.MaxConnections, s.ReservedConnections
}

// checkReserve refuses user, authenticated on a connection holding a slot,
// when the slots left are the reserve and Reserved does not accept it.
func (s *Server) checkReserve(user string) error {
	s.mu.Lock()
	maxConns, reserved := s.limitsLocked()
	inReserve := maxConns > 0 && reserved > 0 && s.mu.conns > maxConns-reserved
	s.mu.Unlock()
	if inReserve && (s.Reserved == nil || !s.Reserved(user)) {
		return pgerr.New(pgerr.TooManyConnections, "remaining connection slots are reserved for admin users").Fatal()
	}
	return nil
}

// errTooManyClients is PostgreSQL's answer past max_connections.
func errTooManyClients() error {
	return pgerr.New(pgerr.TooManyConnections, "sorry, too many clients already").Fatal()
}

// takeSlot takes one of MaxConnections for a connection, or fails with
// 53300; the returned func gives it back.
func (s *Server) takeSlot() (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if maxConns, _ := s.limitsLocked(); maxConns > 0 && s.mu.conns >= maxConns {
		return nil, errTooManyClients()
	}
	s.mu.conns++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.mu.conns--
			s.mu.Unlock()
		})
	}, nil
}

// cancelTarget is what a CancelRequest must name to cancel a session.
type cancelTarget struct {
	secret  uint32
	session Session
}

// Serve accepts connections on ln until ctx is done or ln fails (for
// instance because it was closed). Before returning it closes every
// connection it accepted and waits for their goroutines. It returns nil
// when ctx ended it, else the error of Accept.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.Handler == nil {
		return errors.New("pgwire: Server.Handler is nil")
	}
	connCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !isResourceExhausted(err) {
				return err
			}
			// Out of file descriptors or memory: wait for connections to
			// end rather than give up serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.logger().Warn("pgwire: accept failed, backing off", "err", err, "backoff", backoff)
			if !waitFor(ctx, backoff) {
				return nil
			}
			continue
		}
		backoff = 0
		wg.Go(func() { s.ServeConn(connCtx, nc) })
	}
}

// isResourceExhausted reports whether an Accept error is a shortage that
// may pass.
func isResourceExhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// waitFor waits d, or until ctx is done; it reports whether d passed.
func waitFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// ServeConn serves one client connection until the client leaves, a fatal
// error ends it, or ctx is done. It always closes nc.
func (s *Server) ServeConn(ctx context.Context, nc net.Conn) {
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()
	defer nc.Close()

	c := newConn(s, nc)
	defer c.recoverPanic()
	err := c.run(ctx)
	if c.tls {
		_ = c.nc.Close() // TLS's close_notify; nc itself is closed by the defer
	}
	if err != nil && !isQuietEnd(err) {
		c.log.Info("pgwire: connection ended with an error", "err", err)
	}
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Server) maxMessageBytes() int {
	if s.MaxMessageBytes > 0 {
		return s.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

func (s *Server) authTimeout() time.Duration {
	if s.AuthTimeout > 0 {
		return s.AuthTimeout
	}
	return DefaultAuthTimeout
}

func (s *Server) maxStatements() int {
	if s.MaxStatements > 0 {
		return s.MaxStatements
	}
	return DefaultMaxStatements
}

func (s *Server) maxPortals() int {
	if s.MaxPortals > 0 {
		return s.MaxPortals
	}
	return DefaultMaxPortals
}

func (s *Server) serverVersion() string {
	if s.ServerVersion != "" {
		return s.ServerVersion
	}
	return DefaultServerVersion
}

// register files sess under a fresh random process id and secret, which the
// client receives in BackendKeyData. The returned func removes it.
func (s *Server) register(sess Session) (pid, secret uint32, unregister func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.sessions == nil {
		s.mu.sessions = make(map[uint32]cancelTarget)
	}
	for pid == 0 || s.hasSessionLocked(pid) {
		if pid, err = randomUint32(); err != nil {
			return 0, 0, nil, err
		}
		pid &= 0x7fffffff // a positive int4, as pg_backend_pid() answers it
	}
	if secret, err = randomUint32(); err != nil {
		return 0, 0, nil, err
	}
	s.mu.sessions[pid] = cancelTarget{secret: secret, session: sess}
	unregister = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.mu.sessions, pid)
	}
	return pid, secret, unregister, nil
}

func (s *Server) hasSessionLocked(pid uint32) bool {
	_, ok := s.mu.sessions[pid]
	return ok
}

// cancel cancels the session registered under pid if secret matches. A
// mismatch is silently ignored, as PostgreSQL does.
func (s *Server) cancel(pid uint32, secret []byte) bool {
	s.mu.Lock()
	t, ok := s.mu.sessions[pid]
	s.mu.Unlock()
	if !ok || len(secret) != 4 {
		return false
	}
	var want [4]byte
	binary.BigEndian.PutUint32(want[:], t.secret)
	if subtle.ConstantTimeCompare(want[:], secret) != 1 {
		return false
	}
	t.session.Cancel()
	return true
}

func randomUint32() (uint32, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}
