-- The after-sales desk: orders, tickets, their refunds, exports and the
-- audit log, with a few orders and one ticket under way.
--
-- One schema for SQLite and PostgreSQL: only types and statements both
-- read the same way (TEXT, BIGINT; times are milliseconds since the Unix
-- epoch, written by the server). Ticket numbers come from the `counters`
-- row, bumped with UPDATE ... RETURNING, so every replica on one database
-- draws a different one.

CREATE TABLE orders (
    id TEXT PRIMARY KEY,
    customer TEXT NOT NULL,
    item TEXT NOT NULL,
    total_cents BIGINT NOT NULL
);

CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);

CREATE TABLE tickets (
    number BIGINT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id),
    reason TEXT NOT NULL,
    -- received | inspecting | refunded
    stage TEXT NOT NULL,
    opened_by TEXT NOT NULL,
    opened_at_ms BIGINT NOT NULL
);

CREATE INDEX tickets_by_opening ON tickets (opened_at_ms);

-- Written in the same transaction as its ticket: a ticket has exactly one.
CREATE TABLE refunds (
    ticket_number BIGINT PRIMARY KEY REFERENCES tickets (number),
    -- original_card | store_credit | bank_transfer
    method TEXT NOT NULL,
    amount_cents BIGINT NOT NULL,
    note TEXT
);

-- The CSV of a month, as the export task last wrote it.
CREATE TABLE exports (
    month TEXT PRIMARY KEY,
    csv TEXT NOT NULL,
    tickets BIGINT NOT NULL,
    made_at_ms BIGINT NOT NULL
);

-- What was done, by whom: written in the transaction that does it.
CREATE TABLE audit_log (
    at_ms BIGINT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    detail TEXT NOT NULL
);

CREATE INDEX audit_log_by_subject ON audit_log (subject);

INSERT INTO orders (id, customer, item, total_cents) VALUES
    ('ORD-1001', 'Ada Lovelace', 'Espresso machine', 34900),
    ('ORD-1002', 'Alan Turing', 'Noise-cancelling headphones', 19950),
    ('ORD-1003', 'Grace Hopper', 'Mechanical keyboard', 12900);

-- T-1, opened on 2026-11-02 09:30 UTC, its goods being inspected.
INSERT INTO counters (name, value) VALUES ('ticket', 1);
INSERT INTO tickets (number, order_id, reason, stage, opened_by, opened_at_ms)
    VALUES (1, 'ORD-1002', 'Left ear cup rattles', 'inspecting', 'sample data', 1793611800000);
INSERT INTO refunds (ticket_number, method, amount_cents, note)
    VALUES (1, 'original_card', 19950, NULL);
