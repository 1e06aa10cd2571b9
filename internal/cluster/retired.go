package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Retirement is why a replica was retired (coord.Retire): it holds a
// change the other replicas rolled back (DDL that MariaDB committed as it
// ran it), which the write-ahead log cannot undo. It stays out, across
// restarts, until an operator rebuilt it and brings it back (Reinstate,
// the admin console's REJOIN REPLICA).
type Retirement struct {
	Replica string    `json:"replica"`
	Why     string    `json:"why"`
	Since   time.Time `json:"since"`
}

// retiredFile is the form of the retirement file.
type retiredFile struct {
	Retired []Retirement `json:"retired"`
}

// LoadRetired reads the retirement file at path (see
// Options.RetiredFile): the retired replicas by name. A missing file
// means none. A file that cannot be read or parsed is an error: starting
// without it would take a divergent replica back unchecked.
func LoadRetired(path string) (map[string]Retirement, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Retirement{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("retired replicas: %w", err)
	}
	var f retiredFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("retired replicas: %s: %w", path, err)
	}
	out := map[string]Retirement{}
	for _, r := range f.Retired {
		if r.Replica == "" {
			return nil, fmt.Errorf("retired replicas: %s: an entry names no replica", path)
		}
		out[r.Replica] = r
	}
	return out, nil
}

// objectNotInPrerequisiteState is SQLSTATE 55000, which package pgerr
// does not name.
const objectNotInPrerequisiteState = "55000"

// saveRetired writes the retirement file atomically: a new file, synced,
// renamed over the old one, and the directory synced, so that a crash
// leaves either the old list or the new one.
func saveRetired(path string, m map[string]Retirement) error {
	var f retiredFile
	for _, r := range m {
		f.Retired = append(f.Retired, r)
	}
	sort.Slice(f.Retired, func(i, j int) bool { return f.Retired[i].Replica < f.Retired[j].Replica })
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return writeFileDurably(path, append(b, '\n'))
}

// AddRetirements records more retired replicas in the retirement file at
// path, durably, and returns the file's entries: start-up retires the
// replicas that may hold a schema change it cannot complete (see
// Intent).
func AddRetirements(path string, add []Retirement) (map[string]Retirement, error) {
	m, err := LoadRetired(path)
	if err != nil {
		return nil, err
	}
	for _, r := range add {
		m[r.Replica] = r
	}
	if err := saveRetired(path, m); err != nil {
		return nil, fmt.Errorf("retired replicas: %w", err)
	}
	return m, nil
}

// writeFileDurably replaces the file at path with b: a new file, synced,
// renamed over the old one, and the directory synced, so that a crash
// leaves either the old content or the new.
func writeFileDurably(path string, b []byte) error {
	tmp := path + ".tmp"
	w, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return err
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// retireLocked records that replica r is retired, why: in memory, in
// SHOW REPLICAS, and in the retirement file (durably, before the
// cluster goes on), so that a restart does not take r back. c.mu is
// held.
func (c *Cluster) retireLocked(r coord.ReplicaID, why string) {
	c.mu.retired[r] = true
	name := c.managers[r].Name()
	c.status[r].retired.Store(&why)
	if c.opts.RetiredFile == "" {
		return
	}
	c.mu.retirements[name] = Retirement{Replica: name, Why: why, Since: time.Now().UTC()}
	if err := saveRetired(c.opts.RetiredFile, c.mu.retirements); err != nil {
		c.log.Error("the retirement could not be recorded: after a restart the replica would be taken back unchecked; do not restart shepherd before the replica is rebuilt",
			"replica", name, "file", c.opts.RetiredFile, "err", err)
	}
}

// Reinstate brings back the named replica, retired (coord.Retire, or
// taken out by TakeDown): an operator rebuilt it (a copy of a replica
// still in use, with its log table) and vouches for it. The retirement
// is struck from the retirement file; with a write-ahead log the replica
// then catches up from it and rejoins as any replica that was away,
// without one it is taken back at the next start.
func (c *Cluster) Reinstate(name string) error {
	for i, m := range c.managers {
		if m.Name() != name {
			continue
		}
		r := coord.ReplicaID(i)
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.mu.retired[r] {
			return pgerr.New(objectNotInPrerequisiteState, "replica %q is not retired", name).
				WithHint("REJOIN REPLICA brings back a replica that was retired; one that is down comes back by itself")
		}
		if old, ok := c.mu.retirements[name]; ok && c.opts.RetiredFile != "" {
			delete(c.mu.retirements, name)
			if err := saveRetired(c.opts.RetiredFile, c.mu.retirements); err != nil {
				c.mu.retirements[name] = old
				// Still retired: the file says so.
				return pgerr.Wrap(pgerr.IOError, err, "could not strike replica "+name+" from the retired replicas")
			}
		}
		delete(c.mu.retired, r)
		c.status[r].retired.Store(nil)
		c.status[r].failure.Store(nil)
		c.log.Warn("retired replica reinstated by the operator", "replica", name)
		if c.opts.WAL != nil && c.opts.Cache != nil && c.mu.core.IsDown(r) {
			c.startRecovery(r)
		}
		return nil
	}
	return pgerr.New(pgerr.UndefinedObject, "replica %q does not exist", name)
}
