"""Element helpers shared by the Python examples.

Import it after interpreter.ensure_gst(["Gst"]): it needs PyGObject's Gst.
"""

from gi.repository import Gst


def make(factory, **properties):
    """An element with properties set; a clear error when it is missing."""
    element = Gst.ElementFactory.make(factory, None)
    if element is None:
        raise RuntimeError(
            f"GStreamer element '{factory}' is missing "
            "(install its plugin, or set GST_PLUGIN_PATH)"
        )
    for name, value in properties.items():
        element.set_property(name.replace("_", "-"), value)
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
