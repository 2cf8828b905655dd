package migration

import "context"

// CreateTask validates spec and stores a new idle task.
func (s *Service) CreateTask(ctx context.Context, spec TaskSpec) (int64, error) {
	if err := spec.Normalize(); err != nil {
		return 0, err
	}
	return s.store.TaskCreate(ctx, spec)
}

// Task returns one task with its account counts and totals.
func (s *Service) Task(ctx context.Context, id int64) (Task, error) {
	return s.store.TaskGet(ctx, id)
}

// TaskState returns a task's state: ErrNotFound tells a missing task.
func (s *Service) TaskState(ctx context.Context, id int64) (TaskState, error) {
	return s.store.TaskState(ctx, id)
}

// Tasks lists every task in ascending id order.
func (s *Service) Tasks(ctx context.Context) ([]Task, error) {
	return s.store.TaskList(ctx)
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
