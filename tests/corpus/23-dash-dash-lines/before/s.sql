-- schema
-- version 1
CREATE TABLE t (id int);
++ not sql
