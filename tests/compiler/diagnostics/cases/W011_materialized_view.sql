-- expect: W011 at 5:26 "materialized view"
-- A materialized view is recomputed in batch: sjoin has no streaming state to check there.
CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);

CREATE MATERIALIZED VIEW totals AS
SELECT k, count(*) AS n FROM a GROUP BY k;
