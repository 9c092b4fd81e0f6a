-- schema
-- version 2
CREATE TABLE t (id int);
++ still not sql
