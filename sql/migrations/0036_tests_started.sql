-- When the task's current or last login test began: with how many it has
-- tested, the time left of a long one (a server that delays failed logins
-- makes hours of it).
ALTER TABLE tasks ADD COLUMN tests_started_at timestamptz;
