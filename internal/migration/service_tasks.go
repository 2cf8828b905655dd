package migration

import (
	"context"
	"slices"
	"time"
)

// CreateTask validates spec and stores a new idle task.
func (s *Service) CreateTask(ctx context.Context, spec TaskSpec) (int64, error) {
	if err := spec.Normalize(); err != nil {
		return 0, err
	}
	return s.store.TaskCreate(ctx, spec)
}

// Task returns one task with its account counts and totals.
func (s *Service) Task(ctx context.Context, id int64) (Task, error) {
	t, err := s.store.TaskGet(ctx, id)
	if err != nil {
		return t, err
	}
	tasks := []Task{t}
	err = s.nameTestServers(ctx, tasks)
	return tasks[0], err
}

// nameTestServers names the servers of the tasks whose login test goes
// slowly in their test figures, for the words that say which one makes
// it slow (TestFigures.PaceWords): one read of the endpoints, only then.
func (s *Service) nameTestServers(ctx context.Context, tasks []Task) error {
	now := time.Now()
	if !slices.ContainsFunc(tasks, func(t Task) bool { return t.Tests.Slow(now) }) {
		return nil
	}
	endpoints, err := s.store.EndpointList(ctx)
	if err != nil {
		return err
	}
	hosts := make(map[int64]string, len(endpoints))
	for _, e := range endpoints {
		hosts[e.ID] = e.Host
	}
	for i, t := range tasks {
		if t.Tests.Slow(now) {
			tasks[i].Tests.SourceHost, tasks[i].Tests.DestinationHost = hosts[t.SourceEndpointID], hosts[t.DestinationEndpointID]
		}
	}
	return nil
}

// TaskState returns a task's state: ErrNotFound tells a missing task.
func (s *Service) TaskState(ctx context.Context, id int64) (TaskState, error) {
	return s.store.TaskState(ctx, id)
}

// Tasks lists every task in ascending id order.
func (s *Service) Tasks(ctx context.Context) ([]Task, error) {
	tasks, err := s.store.TaskList(ctx)
	if err != nil {
		return nil, err
	}
	return tasks, s.nameTestServers(ctx, tasks)
}

// UpdateTask replaces the spec of a task that is not running.
func (s *Service) UpdateTask(ctx context.Context, id int64, spec TaskSpec) error {
	if err := spec.Normalize(); err != nil {
		return err
	}
	return s.store.TaskUpdate(ctx, id, spec)
}

// DeleteTask deletes a task that is not running, and its accounts.
func (s *Service) DeleteTask(ctx context.Context, id int64) error {
	return s.store.TaskDelete(ctx, id)
}
