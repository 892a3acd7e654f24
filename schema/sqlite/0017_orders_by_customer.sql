-- A customer's orders, newest first (store.Orders.ListOrdersByCustomer,
-- the operator console's "find by customer"): the index holds the whole sort key,
-- so a page is a backward range read of about LIMIT entries, however many
-- orders the customer has, and no sort.
--
-- orders.bucket: the YDB twin's column (schema/ydb/0017_orders_by_customer.sql),
-- FNV-1a of the id mod 8 (package shared/domain/store/bucket), written on
-- insert. Only the YDB adapter reads by it; rows written before this
-- migration hold NULL, which nothing here reads.
ALTER TABLE orders ADD COLUMN bucket INTEGER;
CREATE INDEX idx_orders_customer_created ON orders (customer_id, created_at, id);
