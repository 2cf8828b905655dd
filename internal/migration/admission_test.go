package migration

import (
	"maps"
	"reflect"
	"testing"
)

func TestAdmit(t *testing.T) {
	big := WaitingTask{ID: 1, ParallelAccounts: 4, SourceHost: "old", DestinationHost: "new", Waiting: 1000}
	one := WaitingTask{ID: 2, ParallelAccounts: 4, SourceHost: "old", DestinationHost: "new", Waiting: 1}
	for _, tc := range []struct {
		name   string
		tasks  []WaitingTask
		held   map[string]int
		limits AttemptLimits
		want   map[int64]int
	}{
		{"up to the parallelism", []WaitingTask{big}, nil, AttemptLimits{}, map[int64]int{1: 4}},
		{"no more than wait", []WaitingTask{one}, nil, AttemptLimits{}, map[int64]int{2: 1}},
		{"what runs counts", []WaitingTask{{ID: 1, ParallelAccounts: 4, Holding: 3, Waiting: 9}}, nil, AttemptLimits{}, map[int64]int{1: 1}},
		{"a full task admits none", []WaitingTask{{ID: 1, ParallelAccounts: 2, Holding: 2, Waiting: 9}}, nil, AttemptLimits{}, map[int64]int{}},
		// Room for two runs on the shared hosts: the small task gets one
		// although the big one is listed first.
		{"shared out", []WaitingTask{big, one}, nil, AttemptLimits{ConnectionsPerHost: 4}, map[int64]int{1: 1, 2: 1}},
		// The big task already holds one: the small one gets the next slot.
		{"least holding first", []WaitingTask{{ID: 1, ParallelAccounts: 4, SourceHost: "old", DestinationHost: "new", Holding: 1, Waiting: 9}, one},
			map[string]int{"old": 1, "new": 2}, AttemptLimits{ConnectionsPerHost: 4}, map[int64]int{2: 1}},
		// Source and destination on one host: a run holds 3 there.
		{"one host for both sides", []WaitingTask{{ID: 1, ParallelAccounts: 4, SourceHost: "h", DestinationHost: "h", Waiting: 9}}, nil,
			AttemptLimits{ConnectionsPerHost: 7}, map[int64]int{1: 2}},
		{"a host held by others", []WaitingTask{big}, map[string]int{"old": 5}, AttemptLimits{ConnectionsPerHost: 6}, map[int64]int{1: 1}},
		{"a full host admits none", []WaitingTask{big}, map[string]int{"new": 6}, AttemptLimits{ConnectionsPerHost: 6}, map[int64]int{}},
		{"alone over the limit", []WaitingTask{big}, nil, AttemptLimits{ConnectionsPerHost: 1}, map[int64]int{1: 1}},
		// An endpoint's own bound lowers the service's for its host, in
		// every task that uses the host.
		{"an endpoint's bound", []WaitingTask{{ID: 1, ParallelAccounts: 9, SourceHost: "old", DestinationHost: "new", Waiting: 9, SourceHostConnections: 2}},
			nil, AttemptLimits{ConnectionsPerHost: 30}, map[int64]int{1: 2}},
		{"another task's endpoint bounds the host", []WaitingTask{big, {ID: 2, ParallelAccounts: 4, SourceHost: "x", DestinationHost: "new",
			DestinationHostConnections: 4}}, map[string]int{"new": 2}, AttemptLimits{}, map[int64]int{1: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.held)
			if got := Admit(tc.tasks, tc.held, tc.limits); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Admit = %v, want %v", got, tc.want)
			}
			if !maps.Equal(before, tc.held) {
				t.Errorf("Admit changed the connections held: %v, was %v", tc.held, before)
			}
		})
	}
}

// TestAdmitIsFairAcrossTasks: three tasks compete for room for three
// runs; each gets one, whatever their order and size.
func TestAdmitIsFairAcrossTasks(t *testing.T) {
	var tasks []WaitingTask
	for id := int64(1); id <= 3; id++ {
		tasks = append(tasks, WaitingTask{ID: id, ParallelAccounts: 10, SourceHost: "old", DestinationHost: "new", Waiting: int(id) * 100})
	}
	got := Admit(tasks, nil, AttemptLimits{ConnectionsPerHost: 6})
	if want := map[int64]int{1: 1, 2: 1, 3: 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Admit = %v, want %v", got, want)
	}
}
