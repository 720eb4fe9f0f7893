"""The warehouses the loader writes to and reads from: one module per warehouse.

As in dlt's ``destinations/impl/<warehouse>/``, everything that speaks to one
warehouse lives in one place, so adding or changing a warehouse touches one
module:

* ``duckdb.py``: the embedded default (a file);
* ``bigquery.py``: a dataset, for fleets (the ``bigquery`` extra);
* ``marts.py``: what both share for reading the marts (the ``Marts``
  protocol, the failed-build rule).

Each warehouse module connects, writes the raw layer (its sink, honouring
``sinks/base.py``'s contract), reads the marts and keeps push's state.
"""
