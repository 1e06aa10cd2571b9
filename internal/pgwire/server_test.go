package pgwire

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func TestPanicInSessionEndsOnlyItsConnection(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.Handler.(*fakeHandler).panics = true })
	other := ts.connect(t)
	c := ts.connect(t)
	c.send(&pgproto3.Query{String: "panic"})
	checkScript(t, c.untilClosed(), "ErrorResponse FATAL XX000 internal error")
	checkScript(t, other.exchange(&pgproto3.Query{String: "insert"}), "CommandComplete INSERT 0 1", "ReadyForQuery I")
	for _, s := range ts.h.allSessions()[1:] {
		waitClosed(t, s)
		if closes, _, _ := s.counts(); closes != 1 {
			t.Errorf("Close called %d times", closes)
		}
	}
}

func TestServeReturnsWhenListenerClosed(t *testing.T) {
	h := newFakeHandler()
	srv := &Server{Handler: h, Logger: slog.New(slog.DiscardHandler)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), ln) }()
	ts := &testServer{srv: srv, h: h, addr: ln.Addr().String()}
	c := ts.connect(t)
	ln.Close()
	// Serve closes the live connection on its way out and waits for it.
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve returned %v, want net.ErrClosed", err)
	}
	checkScript(t, c.untilClosed())
	if closes, _, _ := onlySession(t, h).counts(); closes != 1 {
		t.Errorf("Close called %d times", closes)
	}
}

func TestServeWithoutHandler(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := (&Server{}).Serve(context.Background(), ln); err == nil {
		t.Error("Serve without a Handler did not fail")
	}
}
