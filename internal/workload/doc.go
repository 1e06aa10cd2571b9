// Package workload is the home of the client workloads shepherd is tested
// and measured with. Each workload lives in its own sub-package and talks
// to its database only through the PostgreSQL wire protocol (pgx), so the
// same code runs against a single engine directly and against shepherd in
// front of several:
//
//   - tpcc: a TPC-C-style order-entry workload — schema, loader, the five
//     transactions, input generators, a concurrent runner and a checker of
//     the consistency conditions.
package workload
