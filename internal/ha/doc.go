// Package ha lets several shepherd nodes serve one cluster of replicas,
// one of them active (the leader) and the others standing by, on an
// existing consensus engine, etcd. It builds no consensus of its own:
// leadership is an etcd lease, the log of decided transactions is etcd
// keys, and every write of the leader is an etcd transaction guarded by
// its term.
//
// # The store
//
// Each node either runs an etcd member in process (StartMember, package
// go.etcd.io/etcd/server/v3/embed: three nodes, three members, a data
// directory each) or uses an external etcd cluster; both are reached the
// same way, through a client of their endpoints (Connect). A write that
// etcd acknowledges is in the raft log of a majority of the members,
// each of which fsynced it: that is the durability the local write-ahead
// log gives on one disk, on a majority of machines. A member restarted
// from its directory catches up by itself; AddMember, StartMember with
// Join, and RemoveMember change the membership one member at a time.
//
// # Leadership
//
// A node campaigns (Node.Campaign) with clientv3's election recipe: it
// puts a key "<prefix>leader/<lease>" under a lease of its own, renewed
// in the background, and leads once every key created before its own is
// gone. A term (Leadership) has an epoch, the create revision of its
// key: etcd's revision grows with every write, and a key becomes the
// leader's only after all older ones are deleted, so epochs grow from
// term to term. A term ends when the node resigns (the key is deleted at
// once) or stops renewing its lease (a crash, a partition from the
// store's majority): etcd deletes the key when the lease expires, by the
// store's clock, and the next candidate's key becomes the first. A
// standby thus takes over within the lease (plus an etcd election if the
// etcd leader went down too). Lost closes on the node once its lease is
// no longer renewed; the node may learn that after the store has already
// given the term to another, which is why nothing relies on Lost for
// safety. The leader key's value names the node and where it serves
// clients (LeaderInfo): Node.Leader reads it, Node.Observe follows it, for
// a standby that names or forwards to the leader.
//
// # The replicated log
//
// One key per decided transaction, "<prefix>log/<barrier, 20 digits>",
// holds the record in the local log's encoding (wal.Encode): the same
// record, the same barrier order. Node.Append writes a batch in one etcd
// transaction (several, within the store's request limits) whose
// comparisons include the term's guard, "the leader key still has my
// epoch as its create revision", and "no record at this barrier yet".
// The first comparison is the log's fence: once the term is over, the
// key is gone and the append changes nothing (ErrDeposed). The second
// makes an append idempotent, so one whose answer was lost when etcd's
// leader changed is sent again, and a retry that finds exactly its own
// records in place knows the first attempt was applied. So every
// record in the log was appended by a leader while it led, and a new
// leader, which reads the log (Node.ReadLog) only after its term began,
// sees every record any earlier term could append. A record reaches the
// replicas as a COMMIT only after its append returned, as with the local
// log; a record whose append failed may still be in the store (the
// transaction timed out after being applied), and is then replayed by
// the next leader like any other: the log says "these committed", which
// is true of everything in it.
//
// Log batches records as the local log's group commit does: Enqueue
// never waits, one goroutine appends everything queued in one guarded
// transaction, and records that arrive meanwhile form the next batch.
// TruncateBefore deletes the records every replica applied, keeping the
// newest, under the guard too.
//
// # Fencing the replicas
//
// The log's guard keeps a deposed leader from deciding anything new, but
// a leader that is only partitioned from the store can still reach the
// replicas, with COMMITs it sent before it knew, and with writes that
// are not logged (compare-and-repair's, a MariaDB DDL statement that
// commits as it runs). The replicas fence it off themselves: the rule is
// Admit and Raise (fence.go), each replica's fence row holds the highest
// epoch raised on it, a new leader raises it before its first commit
// there, and every commit checks it under a lock that orders the two.
// docs/DESIGN.md ("Standby shepherds") states the rule and why it
// holds; the model test (TestFenceModel) runs it on every interleaving of
// an old and a new term, and package replica has the statements
// (replica.FenceRaise, replica.LogInsertFenced), tested on PostgreSQL and
// MariaDB.
//
// # In the server
//
// The server runs a node on this package (server/node.go: member,
// campaign, the term's Log as the cluster's WAL, takeover through the
// restart's recovery), but refuses a [cluster] table until the replicas'
// fence is run (docs/DESIGN.md section 9, "Left for the wiring"). Log
// satisfies cluster.WAL, the interface the cluster writes its decided
// transactions to (the local log does too), and a standby refuses
// clients with 57P03 naming the leader (pgwire.Server.Admit).
package ha
