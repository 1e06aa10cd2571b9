-- Cross-engine SQL corpus: changing and removing rows.

-- feature: update
UPDATE emp SET salary = salary * 1.05 WHERE dept_id = 1;

UPDATE emp SET bonus = 0 WHERE bonus IS NULL AND active;

UPDATE product SET stock = stock - 1 WHERE sku = 'A-100';

UPDATE kv SET v = NULL WHERE k = 'no such key';

UPDATE ledger SET amount = amount / 3 WHERE id = 6;

UPDATE nums SET a = b, b = a WHERE id = 8;

UPDATE words SET w = upper(w), lang = DEFAULT WHERE id = 10;

-- feature: update: returning
UPDATE product SET stock = stock + 10 WHERE sku = 'B-300' RETURNING sku, stock;

UPDATE emp SET grade = grade + 1 WHERE grade IS NOT NULL AND hired < '2016-01-01' RETURNING id, grade;

UPDATE counter SET touched = touched + 1 WHERE name LIKE 'dept-%' RETURNING name, touched;

-- feature: update: from
UPDATE order_line SET unit_price = p.price FROM product p
    WHERE p.sku = order_line.sku AND order_line.order_id = 1;

UPDATE emp e SET bonus = coalesce(e.bonus, 0) + 100 FROM dept d
    WHERE d.id = e.dept_id AND d.name = 'Support';

UPDATE orders o SET note = 'vip order' FROM customer c
    WHERE c.id = o.customer_id AND c.vip RETURNING o.id, o.note;

-- feature: update: subquery
UPDATE dept SET budget = (SELECT sum(salary) FROM emp WHERE emp.dept_id = dept.id) WHERE id = 3;

UPDATE product SET discontinued = true
    WHERE sku NOT IN (SELECT sku FROM order_line);

UPDATE customer SET vip = true
    WHERE id IN (SELECT customer_id FROM orders GROUP BY customer_id HAVING count(*) >= 3);

-- feature: delete
DELETE FROM kv WHERE k = 'p2';

DELETE FROM kv WHERE v > 1000 RETURNING k;

DELETE FROM counter WHERE name = 'zero' RETURNING *;

DELETE FROM tagged WHERE item = 99;

-- feature: delete: using
DELETE FROM order_line USING orders
    WHERE orders.id = order_line.order_id AND orders.status = 'cancelled';

DELETE FROM tagged a USING tagged b
    WHERE a.item = b.item AND a.tag > b.tag AND a.item = 3;

-- feature: delete: cascade
DELETE FROM orders WHERE id = 9;

SELECT count(*) FROM order_line WHERE order_id = 9;

-- feature: update: extended protocol parameters
-- params: 5, 'hits'
UPDATE counter SET n = n + $1 WHERE name = $2 RETURNING n;

-- params: 'beta'
DELETE FROM kv WHERE k = $1;

-- params: 0.5, 'A-200'
UPDATE product SET price = price - $1 WHERE sku = $2 RETURNING price;

-- feature: writable cte
WITH gone AS (DELETE FROM kv WHERE k LIKE 'emp%' RETURNING k, v)
    SELECT count(*), sum(v) FROM gone;

-- feature: check the changes
SELECT id, name, salary, bonus, grade FROM emp ORDER BY id;

SELECT sku, stock, price, discontinued FROM product ORDER BY sku;

SELECT k, v, note FROM kv ORDER BY k;

SELECT name, n, touched FROM counter ORDER BY name;

SELECT order_id, line_no, unit_price FROM order_line ORDER BY order_id, line_no;

SELECT id, a, b FROM nums ORDER BY id;

SELECT item, tag FROM tagged ORDER BY item, tag;

SELECT id, amount FROM ledger ORDER BY id;
