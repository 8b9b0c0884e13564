-- The revenue per payment method of the payments joined in paid.sql.
CREATE STREAMING TABLE revenue AS
SELECT method, count(*) AS payments, sum(amount) AS revenue
FROM STREAM(paid)
GROUP BY method
