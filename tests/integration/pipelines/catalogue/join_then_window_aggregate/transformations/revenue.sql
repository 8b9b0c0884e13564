-- The revenue per 10-second window of the payments joined in paid.sql.
CREATE STREAMING TABLE revenue AS
SELECT window(paid_at, '10 seconds') AS paid_window, count(*) AS payments, sum(amount) AS revenue
FROM STREAM(paid)
GROUP BY window(paid_at, '10 seconds')
