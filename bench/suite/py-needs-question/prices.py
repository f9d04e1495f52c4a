"""Price formatting."""


def format_price(cents):
    """Render an amount in cents for the shop's pages."""
    return "{:.2f}".format(cents / 100)
