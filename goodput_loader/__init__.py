"""goodput_loader: land ml-goodput-measurement log entries in a warehouse.

The package has one job per module: ``entries`` validates and normalises one
log entry, ``sources`` read entries from files or Cloud Logging, ``sinks``
write them transactionally, ``pipeline`` moves batches from a source to a sink,
and ``cli`` exposes it all as the ``goodput-loader`` command.
"""

__version__ = "0.1.0"
