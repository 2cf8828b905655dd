-- The provider whose limits an endpoint's server has (transfer.Profile):
-- auto (told from the server), generic, gmail, microsoft365 or exchange.
ALTER TABLE endpoints ADD COLUMN profile text NOT NULL DEFAULT 'auto'
    CHECK (profile IN ('auto', 'generic', 'gmail', 'microsoft365', 'exchange'));
