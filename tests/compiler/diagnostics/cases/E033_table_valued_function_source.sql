-- expect: E033 at 5:15 "table-valued function"
-- read_files is no function of open-source Spark, and STREAM(json.`dir`) reads a batch:
-- the pipeline defines such a stream in Python.
CREATE STREAMING TABLE raw AS
SELECT * FROM STREAM read_files('/data/in', format => 'json');
