package testenv

import "syscall"

// Pause suspends the server (SIGSTOP to its process group), as a hung
// engine or a partition looks to its clients: connections stay open and
// new ones are accepted by the kernel, but nothing is answered. Resume
// undoes it; it is also done when the test ends, before the server is
// stopped.
func (m *MariaDBServer) Pause() {
	m.t.Helper()
	if m.cur == nil {
		m.t.Fatal("testenv: Pause of a MariaDB server that is not running")
	}
	if err := syscall.Kill(-m.cur.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		m.t.Fatalf("testenv: SIGSTOP: %v", err)
	}
	m.t.Cleanup(m.Resume)
}

// Resume lets a paused server go on (SIGCONT); it does nothing to one
// that runs.
func (m *MariaDBServer) Resume() {
	if m.cur != nil {
		_ = syscall.Kill(-m.cur.cmd.Process.Pid, syscall.SIGCONT)
	}
}
