-- How the accounts of an endpoint log in: each with its own password
-- ('password'), or through one administrator's master login ('master')
-- that acts for every account, naming it as SASL PLAIN's authorization
-- identity ('authzid') or as "account*master" ('separator', Dovecot).
-- The master password is sealed like the accounts' passwords (label
-- endpoints/ID/master_password).
ALTER TABLE endpoints
    ADD COLUMN auth_method     text  NOT NULL DEFAULT 'password' CHECK (auth_method IN ('password', 'master')),
    ADD COLUMN master_login    text  NOT NULL DEFAULT '',
    ADD COLUMN master_form     text  NOT NULL DEFAULT 'authzid' CHECK (master_form IN ('authzid', 'separator')),
    ADD COLUMN master_password bytea,
    ADD CONSTRAINT endpoints_master_complete
        CHECK (auth_method <> 'master' OR (master_login <> '' AND master_password IS NOT NULL));
