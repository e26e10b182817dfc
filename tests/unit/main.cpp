#define BOOST_TEST_MODULE zpolicy_unit
#include <boost/test/unit_test.hpp>
