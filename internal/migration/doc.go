// Package migration holds mailmigrate's domain: endpoints, tasks and accounts,
// the rules that govern them, the sentinel errors callers map to responses,
// and the small storage interfaces the rules need. It imports no database,
// HTTP or generated code.
package migration
