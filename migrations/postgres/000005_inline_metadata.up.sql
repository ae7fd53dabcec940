-- A row wider than about 2 KB is normally TOASTed: its metadata moves to
-- 2 KB chunks in a side table, so every commit of a table whose compressed
-- metadata is 2-4 KB (a few dozen commits old) wrote five rows: the row,
-- two new chunks, two dead ones. Up to the largest target Postgres allows
-- (8160 bytes) rows now stay inline: one row written per commit, and a load
-- reads one heap tuple instead of the chunk index and its chunks. Larger
-- metadata is TOASTed as before. The fill factor leaves room in each page
-- for the next version of its rows, so that updates stay HOT (no index
-- entries written).
ALTER TABLE catalog_objects SET (toast_tuple_target = 8160, fillfactor = 75);
