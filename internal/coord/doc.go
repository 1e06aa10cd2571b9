// Package coord is the coordinator of shepherd: a pure state machine that
// decides which replica runs which operation when, which answers reach the
// client, and whether a transaction commits.
//
// It does no I/O and owns no goroutines, clocks or randomness. The shell
// (package cluster) feeds it events with Step — a client submitted a
// statement, a replica answered — and, after each Step, collects the
// actions it must carry out with Ready: send an operation to a replica,
// reply to a client, report a replica whose answer lost the vote. The shell
// performs the actions in the order given. This is the Step/Ready shape of
// etcd-io/raft, and it is what lets scenario scripts (testdata/) and a
// seeded simulator drive every interleaving deterministically.
//
// What the coordinator knows of a statement is only its identity (a
// transaction and a sequence number) and, once answered, each replica's
// vote: the digest of its canonical answer, or its error's SQLSTATE. The
// statements themselves and the full answers stay in the shell.
//
// Modes implemented here:
//
//   - passthrough: one replica, f = 0; every operation goes out at once and
//     its answer is the reply.
//   - serial: one transaction at a time across the cluster (admission in
//     arrival order); every replica runs the transactions in that order; a
//     statement's reply is the answer f+1 replicas agree on; COMMIT is
//     acknowledged once f+1 replicas have committed.
//   - cbs: commit barrier scheduling (cbs.go, with its own invariants), the
//     default. The primary runs statements at once and its answers are the
//     replies; secondaries run them concurrently under the ordering rules;
//     a COMMIT needs f ready secondaries endorsing every reply, or the
//     transaction aborts everywhere. A primary's error (a constraint, a
//     missing table) is a reply only once f secondaries gave it too.
//   - ss: as cbs, but every secondary runs one transaction at a time, once
//     its COMMIT was asked for (the paper's Pronto-like baseline).
//
// Structure: Step hands every event to the mode's rules (the rules
// interface): voting (voting.go) runs passthrough and serial, which
// differ only in serial's admission order; cbs (cbs.go) runs CBS and SS,
// which differ only in their secondaries' schedules. cbs keeps one
// record per replica (replica): its state (up, joining, down, retired),
// its schedule (primary, concurrent, concurrent MVCC, sequential,
// pipelined) and the data of that schedule. Every "f+1 replicas agree"
// is decided by package quorum, which repair's agreement uses too.
//
// Besides client work the shell runs surveys (Begin.Survey): the
// transactions of compare-and-repair. They are scheduled exactly like
// client transactions, so every replica answers them on the same logical
// state, but their answers are collected, not voted on: a survey commits
// only when every replica that took part (all live ones, unless one takes
// more than a patience limit) gave the same answers, and otherwise rolls
// back everywhere, accusing nobody (Surveyed).
//
// Invariants kept by the serial mode:
//
//  1. At most one transaction holds the admission token; only its
//     operations are sent to replicas that are not still finishing an
//     earlier one.
//  2. Each replica receives the operations of transactions in admission
//     order, and receives a transaction's operations only after it has
//     finished (committed or rolled back) the previous transaction.
//  3. A reply carries an answer that at least f+1 replicas gave; when no
//     answer can reach f+1 the reply is a failure and the transaction must
//     roll back.
package coord
