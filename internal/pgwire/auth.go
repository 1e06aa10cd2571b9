package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// scramIterations is the PBKDF2 iteration count, PostgreSQL's default.
const scramIterations = 4096

const scramMechanism = "SCRAM-SHA-256"

// authMethod says how a user must authenticate.
type authMethod uint8

const (
	authTrust authMethod = iota + 1
	authSCRAM
)

// chooseAuth decides how user, connecting from remote, must authenticate.
func (s *Server) chooseAuth(user string, remote net.Addr) (authMethod, error) {
	users := s.users()
	if len(users) == 0 {
		if isLocalAddr(remote) {
			return authTrust, nil
		}
		return 0, pgerr.New(pgerr.InvalidAuthorization,
			"no authentication is configured for user %q: only local connections are accepted", user).Fatal()
	}
	if pw, ok := users[user]; ok && pw == "" {
		return authTrust, nil
	}
	return authSCRAM, nil
}

// isLocalAddr reports whether a connection from addr comes from this host:
// loopback TCP, a Unix socket or an in-process pipe.
func isLocalAddr(addr net.Addr) bool {
	if addr == nil {
		return false
	}
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return addr.Network() == "pipe"
}

// credentials returns the SCRAM credentials of user. An unknown user gets
// credentials that no password matches, with a salt derived from the name,
// so that the exchange looks the same whether the user exists or not.
func (s *Server) credentials(user string) (scram.StoredCredentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.mu.creds[user]; ok {
		return c, nil
	}
	pw, known := s.usersLocked()[user]
	if !known {
		return s.mockCredentialsLocked(user)
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return scram.StoredCredentials{}, err
	}
	client, err := scram.SHA256.NewClient(user, pw, "")
	if err != nil {
		// PostgreSQL uses the password as it is when SASLprep rejects it.
		client, err = scram.SHA256.NewClientUnprepped(user, pw, "")
		if err != nil {
			return scram.StoredCredentials{}, err
		}
	}
	c := client.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
	if s.mu.creds == nil {
		s.mu.creds = make(map[string]scram.StoredCredentials)
	}
	s.mu.creds[user] = c
	return c, nil
}

func (s *Server) mockCredentialsLocked(user string) (scram.StoredCredentials, error) {
	if s.mu.mockSecret == nil {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return scram.StoredCredentials{}, err
		}
		s.mu.mockSecret = secret
	}
	h := sha256.New()
	h.Write(s.mu.mockSecret)
	h.Write([]byte(user))
	salt := h.Sum(nil)[:16]
	stored := make([]byte, sha256.Size)
	server := make([]byte, sha256.Size)
	if _, err := rand.Read(stored); err != nil {
		return scram.StoredCredentials{}, err
	}
	if _, err := rand.Read(server); err != nil {
		return scram.StoredCredentials{}, err
	}
	return scram.StoredCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(salt), Iters: scramIterations},
		StoredKey:  stored,
		ServerKey:  server,
	}, nil
}

// authenticate runs the authentication exchange for user and ends with
// AuthenticationOk, or returns a FATAL error to send to the client.
func (c *conn) authenticate(ctx context.Context, user string) error {
	method, err := c.srv.chooseAuth(user, c.nc.RemoteAddr())
	if err != nil {
		return err
	}
	if method == authSCRAM {
		if err := c.scramExchange(ctx, user); err != nil {
			return err
		}
	}
	c.send(&pgproto3.AuthenticationOk{})
	return c.be.SetAuthType(pgproto3.AuthTypeOk)
}

// passwordFailed is the one error every failed password authentication
// returns, whatever the reason, so that it does not tell user names apart.
func passwordFailed(user string) error {
	return pgerr.New(pgerr.InvalidPassword, "password authentication failed for user %q", user).Fatal()
}

// scramExchange runs SCRAM-SHA-256 (RFC 7677) with the client. The SCRAM
// user name inside the messages is ignored, as in PostgreSQL: the startup
// packet's user is the one authenticated.
func (c *conn) scramExchange(ctx context.Context, user string) error {
	creds, err := c.srv.credentials(user)
	if err != nil {
		return pgerr.Wrap(pgerr.InternalError, err, "preparing SCRAM credentials").Fatal()
	}
	server, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return creds, nil })
	if err != nil {
		return pgerr.Wrap(pgerr.InternalError, err, "starting SCRAM").Fatal()
	}
	conv := server.NewConversation()

	c.send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	if err := c.flushSetAuth(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	first, err := c.receiveAuth()
	if err != nil {
		return err
	}
	initial, ok := first.(*pgproto3.SASLInitialResponse)
	if !ok {
		return pgerr.New(pgerr.ProtocolViolation, "expected SASL response, got %T", first).Fatal()
	}
	if initial.AuthMechanism != scramMechanism {
		return pgerr.New(pgerr.ProtocolViolation, "client selected an invalid SASL authentication mechanism").Fatal()
	}
	serverFirst, err := conv.Step(string(initial.Data))
	if err != nil {
		return passwordFailed(user)
	}

	c.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := c.flushSetAuth(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	second, err := c.receiveAuth()
	if err != nil {
		return err
	}
	final, ok := second.(*pgproto3.SASLResponse)
	if !ok {
		return pgerr.New(pgerr.ProtocolViolation, "expected SASL response, got %T", second).Fatal()
	}
	serverFinal, err := conv.Step(string(final.Data))
	if err != nil || !conv.Valid() {
		return passwordFailed(user)
	}
	c.send(&pgproto3.AuthenticationSASLFinal{Data: []byte(serverFinal)})
	return nil
}

func (c *conn) flushSetAuth(authType uint32) error {
	if err := c.flush(); err != nil {
		return err
	}
	return c.be.SetAuthType(authType)
}

// receiveAuth reads the client's next authentication message. A client that
// hangs up here simply ends the connection.
func (c *conn) receiveAuth() (pgproto3.FrontendMessage, error) {
	msg, err := c.be.Receive()
	if err != nil {
		return nil, c.receiveError(err)
	}
	return msg, nil
}
