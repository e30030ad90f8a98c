-- A function that returns rows is estimated at 1,000 of them unless it says otherwise. With that
-- estimate the read of a change's own captured rows (command-service ChangeSet) cost more than
-- jit_above_cost, so a PostgreSQL built with JIT compiled a hundred functions for every plan and
-- commit: 50 to 100 ms of the server's CPU for a one-row change. A Tidemark change captures a few
-- rows as a rule; a large one is read once, so a low estimate costs it nothing.
ALTER FUNCTION tidemark.changes_of_current_transaction(text) ROWS 10;
