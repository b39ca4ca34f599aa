"""What a person reads: the markdown and HTML reports and their charts."""
