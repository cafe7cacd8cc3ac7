"""Element helpers shared by the Python examples.

Import it after interpreter.ensure_gst(["Gst"]): it needs PyGObject's Gst.
"""

import math

from gi.repository import Gst


def make(factory, **properties):
    """An element with properties set, in the order given; a clear error
    when it is missing, or when it refuses a value (out of range, or
    invalid with its other settings: the element's warning says why)."""
    element = Gst.ElementFactory.make(factory, None)
    if element is None:
        raise RuntimeError(
            f"GStreamer element '{factory}' is missing "
            "(install its plugin, or set GST_PLUGIN_PATH)"
        )
    for name, value in properties.items():
        name = name.replace("_", "-")
        try:
            element.set_property(name, value)
        except (TypeError, ValueError) as error:
            raise RuntimeError(f"{factory}: {name}={value}: {error}")
        if isinstance(value, (bool, int, float)):
            taken = element.get_property(name)
            if not math.isclose(taken, value, rel_tol=1e-6):
                raise RuntimeError(
                    f"{factory} refused {name}={value} (it stays {taken})"
                )
    return element


def link_chain(elements):
    """Links the elements one after the other; a clear error where a link
    fails."""
    for upstream, downstream in zip(elements, elements[1:]):
        if not upstream.link(downstream):
            raise RuntimeError(
                f"cannot link {upstream.get_name()} "
                f"to {downstream.get_name()}"
            )
