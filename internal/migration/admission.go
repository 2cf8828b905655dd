package migration

import (
	"maps"
	"slices"
)

// WaitingTask is a task with accounts ready to start, as admission sees
// it: how many of its accounts hold room and how many wait.
type WaitingTask struct {
	ID               int64
	ParallelAccounts int
	SourceHost       string // lower case
	DestinationHost  string // lower case
	Holding          int    // running or admitted
	Waiting          int    // ready to be admitted
	// SourceHostConnections and DestinationHostConnections are the
	// endpoints' own bounds on the connections to their hosts (0: none):
	// a host's bound is the lowest of its endpoints' and the service's.
	SourceHostConnections, DestinationHostConnections int
}

// Admit decides how many waiting accounts of each task start now, given
// the IMAP connections held on each host (lower case) across the service.
// Room is shared out one account at a time, always to the task that holds
// least, earlier tasks in the list first among equals: a task's thousand
// waiting accounts do not starve another task's one. A task never holds
// more than its parallelism, and a host never more than
// limits.ConnectionsPerHost connections, except that an attempt that alone
// needs more than that limit may run alone. An endpoint's own bound on
// its host's connections lowers limits.ConnectionsPerHost for that host.
func Admit(tasks []WaitingTask, held map[string]int, limits AttemptLimits) map[int64]int {
	held = maps.Clone(held)
	if held == nil {
		held = map[string]int{}
	}
	caps := HostConnectionCaps(tasks, limits)
	order := slices.Clone(tasks)
	admitted := map[int64]int{}
	for {
		// Stable: the list's order breaks ties.
		slices.SortStableFunc(order, func(a, b WaitingTask) int { return a.Holding - b.Holding })
		next := -1
		for i, t := range order {
			if t.Waiting > 0 && t.Holding < t.ParallelAccounts && hostsHaveRoom(t, held, caps) {
				next = i
				break
			}
		}
		if next < 0 {
			return admitted
		}
		t := &order[next]
		t.Waiting--
		t.Holding++
		admitted[t.ID]++
		for host, n := range connectionsOf(*t) {
			held[host] += n
		}
	}
}

// connectionsOf is what one running account of t holds on each host.
func connectionsOf(t WaitingTask) map[string]int {
	need := map[string]int{t.SourceHost: SourceConnections}
	need[t.DestinationHost] += DestinationConnections
	return need
}

// HostConnectionCaps are the bounds on each host's connections (lower
// case) that tasks run under: the lowest of limits.ConnectionsPerHost and
// their endpoints' own; a host without any is absent.
func HostConnectionCaps(tasks []WaitingTask, limits AttemptLimits) map[string]int {
	caps := map[string]int{}
	bound := func(host string, n int) {
		if n > 0 && (caps[host] == 0 || n < caps[host]) {
			caps[host] = n
		}
	}
	for _, t := range tasks {
		bound(t.SourceHost, limits.ConnectionsPerHost)
		bound(t.DestinationHost, limits.ConnectionsPerHost)
		bound(t.SourceHost, t.SourceHostConnections)
		bound(t.DestinationHost, t.DestinationHostConnections)
	}
	return caps
}

func hostsHaveRoom(t WaitingTask, held map[string]int, caps map[string]int) bool {
	for host, need := range connectionsOf(t) {
		if limit := caps[host]; limit > 0 && held[host] > 0 && held[host]+need > limit {
			return false
		}
	}
	return true
}
