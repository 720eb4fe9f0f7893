"""`goodput-loader push`: the marts to Google Cloud Monitoring, as the library's monitor writes them."""
