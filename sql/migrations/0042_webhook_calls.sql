-- How often a task's webhook is called: per_pass, once when a pass (or the
-- final pass) ends, its body listing the accounts that did not complete;
-- per_account, also once for each account that fails. A bad day of 1 700
-- dead logins is one call, not 1 700, unless the operator asks for them.
ALTER TABLE tasks ADD COLUMN webhook_calls text NOT NULL DEFAULT 'per_pass'
    CHECK (webhook_calls IN ('per_pass', 'per_account'));
