-- expect: E023 at 5:24 "without watermark"
-- SELECT DISTINCT is a streaming aggregate: a pipeline's flow appends, which needs a watermark.
CREATE STREAMING TABLE clicks (user_id BIGINT, page STRING, click_time TIMESTAMP);

CREATE STREAMING TABLE pages AS SELECT DISTINCT user_id, page FROM STREAM(clicks);
