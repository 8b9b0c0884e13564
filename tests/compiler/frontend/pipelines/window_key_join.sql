-- A join on a window of each side's time, the windows projected in subqueries (Spark
-- resolves window() only in an operator of one input), as compile --target pipeline writes
-- it; and Spark's literals: a doubled quote, escapes, typed literals, suffixes.
CREATE STREAMING TABLE temperature (device_id STRING, reading_time TIMESTAMP, celsius DOUBLE);
CREATE STREAMING TABLE humidity (device_id STRING, reading_time TIMESTAMP, percent DOUBLE);

CREATE STREAMING TABLE climate AS
SELECT t.device_id, t.w AS reading_window, t.celsius, h.percent,
       'it''s \u00e9t\u00e9' AS note, 10L AS ten, TIMESTAMP '2026-01-01 00:00:00' AS since
FROM (
  SELECT device_id, timestamp_micros(unix_micros(reading_time)) AS reading_time, celsius,
         window(reading_time, '10 seconds') AS w
  FROM STREAM(temperature) WATERMARK reading_time DELAY OF INTERVAL 5 SECONDS
) AS t
JOIN (
  SELECT device_id, timestamp_micros(unix_micros(reading_time)) AS reading_time, percent,
         window(reading_time, '10 seconds') AS w
  FROM STREAM(humidity) WATERMARK reading_time DELAY OF INTERVAL '5' SECOND
) AS h
  ON t.device_id = h.device_id AND t.w = h.w
WHERE t.celsius > -40.0D;
