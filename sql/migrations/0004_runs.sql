-- A run's memory per account: the copy engine's sync state (source folder
-- → UIDVALIDITY, last settled UID, ...), so that the next run copies only
-- what is new.
ALTER TABLE accounts ADD COLUMN sync_state jsonb NOT NULL DEFAULT '{}';
