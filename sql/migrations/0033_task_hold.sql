-- Pause with stop holds the pass under way instead of canceling it: its
-- running accounts stop between messages and wait queued, none is
-- admitted, and on resume they go on where they were.
ALTER TABLE tasks ADD COLUMN held boolean NOT NULL DEFAULT false;
