package coord

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// TestScripts runs the scenario scripts in testdata/. Each command feeds
// events to a coordinator and prints the actions it produced; run with
// -rewrite to regenerate the expected output, and review the diff.
//
//	init mode=serial n=3 f=1
//	init mode=cbs n=3 f=1 classes=locking,mvcc,serial stall=3 concurrent=1 ddlcommits=0 ptimeout=9 opticks=5 drain=20 ahead=1
//	begin t=1 [survey=1]
//	stmt t=1 seq=0 [writes=1] [ddl=1] [recovers=1] [defer=1] | commit t=1 | rollback t=1 | cancel t=1
//	answer r=0 op=t1/0 v=A      (v names an answer; err=40001 an error;
//	                             try=1 answers a re-run)
//	down r=1
//	alive r=0 | unresponsive r=0  (the shell's probe of r's engine)
//	logged b=2 | logrefused t=1 code=54000 | logfailed code=58030
//	tick [n=3]
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var c *Coordinator
		labels := map[answer.Digest]string{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			args := map[string]string{}
			for _, a := range d.CmdArgs {
				args[a.Key] = strings.Join(a.Vals, ",")
			}
			num := func(k string) int {
				n, err := strconv.Atoi(args[k])
				if err != nil {
					d.Fatalf(t, "%s: bad %s=%q", d.Pos, k, args[k])
				}
				return n
			}
			if d.Cmd == "init" {
				mode := map[string]Mode{"serial": Serial, "passthrough": Passthrough, "cbs": CBS, "ss": SS}[args["mode"]]
				cfg := Config{Mode: mode, N: num("n"), F: num("f")}
				if cl, ok := args["classes"]; ok {
					for _, name := range strings.Split(cl, ",") {
						class := map[string]driver.Class{"locking": driver.Locking, "mvcc": driver.MVCC, "serial": driver.Serial}[name]
						if class == 0 {
							d.Fatalf(t, "unknown class %q", name)
						}
						cfg.Classes = append(cfg.Classes, class)
					}
				}
				if list, ok := args["concurrent"]; ok {
					// concurrent=1,2: those secondaries run concurrently,
					// the others one at a time.
					cfg.Concurrent = make([]bool, cfg.N)
					for _, r := range strings.Split(list, ",") {
						i, err := strconv.Atoi(r)
						if err != nil || i >= cfg.N {
							d.Fatalf(t, "bad concurrent=%q", list)
						}
						cfg.Concurrent[i] = true
					}
				}
				if _, ok := args["stall"]; ok {
					cfg.StallTicks = num("stall")
				}
				cfg.Log = args["log"] == "1"
				if list, ok := args["ddlcommits"]; ok {
					// ddlcommits=0: those replicas commit DDL as they run it.
					cfg.DDLCommits = make([]bool, cfg.N)
					for _, r := range strings.Split(list, ",") {
						i, err := strconv.Atoi(r)
						if err != nil || i >= cfg.N {
							d.Fatalf(t, "bad ddlcommits=%q", list)
						}
						cfg.DDLCommits[i] = true
					}
				}
				if _, ok := args["ptimeout"]; ok {
					cfg.PrimaryTimeout = num("ptimeout")
				}
				if _, ok := args["opticks"]; ok {
					cfg.OpTicks = num("opticks")
				}
				if _, ok := args["drain"]; ok {
					cfg.DrainTicks = num("drain")
				}
				cfg.Ahead = args["ahead"] == "1"
				c = New(cfg)
				return ""
			}
			switch d.Cmd {
			case "begin":
				c.Step(Begin{Txn: TxnID(num("t")), Survey: args["survey"] == "1"})
			case "stmt":
				c.Step(Submit{Op: Op{Txn: TxnID(num("t")), Kind: OpStmt, Seq: num("seq")}, Writes: args["writes"] == "1", DDL: args["ddl"] == "1", Recovers: args["recovers"] == "1", Defer: args["defer"] == "1"})
			case "cancel":
				c.Step(Cancel{Txn: TxnID(num("t"))})
			case "commit":
				c.Step(Submit{Op: Op{Txn: TxnID(num("t")), Kind: OpCommit}})
			case "rollback":
				c.Step(Submit{Op: Op{Txn: TxnID(num("t")), Kind: OpRollback}})
			case "answer":
				var v Vote
				if code, ok := args["err"]; ok {
					v.Code = code
				} else {
					v.Digest = sha256.Sum256([]byte(args["v"]))
					labels[v.Digest] = args["v"]
				}
				try := 0
				if _, ok := args["try"]; ok {
					try = num("try")
				}
				c.Step(Answered{R: ReplicaID(num("r")), Op: parseOp(t, d, args["op"]), Try: try, V: v})
			case "down":
				c.Step(Down{R: ReplicaID(num("r"))})
			case "alive":
				c.Step(Alive{R: ReplicaID(num("r"))})
			case "unresponsive":
				c.Step(Unresponsive{R: ReplicaID(num("r")), Why: "no answer to a probe"})
			case "logged":
				c.Step(Logged{Barrier: num("b")})
			case "logrefused":
				c.Step(LogRefused{Txn: TxnID(num("t")), Fail: pgerr.New(args["code"], "refused by the log")})
			case "logfailed":
				c.Step(LogFailed{Fail: pgerr.New(args["code"], "the log failed")})
			case "rejoin":
				c.Step(Rejoin{R: ReplicaID(num("r"))})
			case "caught":
				c.Step(Caught{R: ReplicaID(num("r"))})
			case "decided":
				return fmt.Sprintf("decided %d\n", c.Decided())
			case "applied":
				// What the write-ahead log may forget: per replica, the
				// barrier below which it committed everything.
				var b strings.Builder
				for r := range c.cfg.N {
					fmt.Fprintf(&b, "r%d applied %d\n", r, c.Applied(ReplicaID(r)))
				}
				return b.String()
			case "tick":
				n := 1
				if _, ok := args["n"]; ok {
					n = num("n")
				}
				for range n {
					c.Step(Tick{})
				}
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			var b strings.Builder
			for _, a := range c.Ready() {
				b.WriteString(render(a, labels))
				b.WriteByte('\n')
			}
			return b.String()
		})
	})
}

func parseOp(t *testing.T, d *datadriven.TestData, s string) Op {
	txn, rest, ok := strings.Cut(strings.TrimPrefix(s, "t"), "/")
	id, err := strconv.Atoi(txn)
	if !ok || err != nil {
		d.Fatalf(t, "bad op %q", s)
	}
	switch rest {
	case "commit":
		return Op{Txn: TxnID(id), Kind: OpCommit}
	case "rollback":
		return Op{Txn: TxnID(id), Kind: OpRollback}
	}
	seq, err := strconv.Atoi(rest)
	if err != nil {
		d.Fatalf(t, "bad op %q", s)
	}
	return Op{Txn: TxnID(id), Kind: OpStmt, Seq: seq}
}

func render(a Action, labels map[answer.Digest]string) string {
	vote := func(v Vote) string {
		if !v.OK() {
			return "err=" + v.Code
		}
		if v == (Vote{}) {
			return "-"
		}
		return labels[v.Digest]
	}
	switch a := a.(type) {
	case Send:
		if a.Try > 0 {
			return fmt.Sprintf("send r%d %v try=%d", a.R, a.Op, a.Try)
		}
		return fmt.Sprintf("send r%d %v", a.R, a.Op)
	case Abort:
		return fmt.Sprintf("abort r%d t%d try=%d", a.R, a.Txn, a.Try)
	case Reply:
		if a.Fail != nil {
			return fmt.Sprintf("reply %v fail %s", a.Op, a.Fail.Code)
		}
		if a.From < 0 {
			return fmt.Sprintf("reply %v", a.Op)
		}
		return fmt.Sprintf("reply %v from r%d", a.Op, a.From)
	case Mismatch:
		return fmt.Sprintf("mismatch r%d %v got=%s want=%s", a.R, a.Op, vote(a.Got), vote(a.Want))
	case MarkDown:
		return fmt.Sprintf("down r%d (%s)", a.R, a.Why)
	case Finished:
		return fmt.Sprintf("finished t%d", a.Txn)
	case Retire:
		return fmt.Sprintf("retire r%d (%s)", a.R, a.Why)
	case Log:
		return fmt.Sprintf("log t%d b=%d", a.Txn, a.Barrier)
	case NewPrimary:
		return fmt.Sprintf("new primary r%d view %d", a.R, a.View)
	case Surveyed:
		var took []string
		for r, ok := range a.Took {
			if ok {
				took = append(took, fmt.Sprintf("r%d", r))
			}
		}
		return fmt.Sprintf("surveyed t%d took=%s unanimous=%v", a.Txn, strings.Join(took, ","), a.Unanimous)
	}
	return fmt.Sprintf("%T", a)
}
