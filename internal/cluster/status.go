package cluster

import (
	"context"
	"fmt"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
)

// ReplicaStatus is one row of SHOW REPLICAS.
type ReplicaStatus struct {
	Name   string
	Driver string
	Class  string
	// Role is "primary" (passthrough's only replica) or "voter" (serial
	// mode: every replica votes on every answer).
	Role string
	// State is "up", "suspect" (an answer of it lost a vote) or "down".
	State      string
	Mismatches int64
}

// Replicas reports the state of every replica, in config order.
func (c *Cluster) Replicas() []ReplicaStatus {
	out := make([]ReplicaStatus, len(c.managers))
	for i, m := range c.managers {
		st := &c.status[i]
		s := ReplicaStatus{
			Name:       m.Name(),
			Driver:     m.Engine().Driver(),
			Class:      m.Engine().Class().String(),
			Role:       "voter",
			State:      "up",
			Mismatches: st.mismatches.Load(),
		}
		if c.opts.Mode == coord.Passthrough {
			s.Role = "primary"
		}
		switch {
		case st.down.Load():
			s.State = "down"
		case st.suspect.Load():
			s.State = "suspect"
		}
		out[i] = s
	}
	return out
}

// Mode returns the cluster's mode name.
func (c *Cluster) Mode() string {
	switch c.opts.Mode {
	case coord.Passthrough:
		return "passthrough"
	case coord.Serial:
		return "serial"
	}
	return fmt.Sprint(c.opts.Mode)
}

// Describe returns the result columns of a statement before it runs, by
// running its describe form (no rows, NULL parameters) on the first
// replica that is up, outside any transaction.
func (c *Cluster) Describe(ctx context.Context, st *sqlan.Stmt) ([]answer.Column, error) {
	dst := st.Describe()
	if dst == nil {
		return nil, nil
	}
	var last error = pgerr.New(pgerr.ConnectionFailure, "no replica is up to describe the statement")
	for i, m := range c.managers {
		if c.status[i].down.Load() {
			continue
		}
		args := make([]driver.Arg, dst.NumParams)
		for j := range args {
			args[j] = driver.Arg{Null: true}
		}
		a, err := m.Describe(ctx, query(stmtCall{st: dst, args: args}, m.Engine().Dialect()))
		if err == nil {
			return a.Columns, nil
		}
		last = err
		if !pgerr.IsConnection(err) {
			break
		}
	}
	return nil, last
}
